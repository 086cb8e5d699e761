#include "lessons/runner.hpp"

#include <stdexcept>
#include <vector>

namespace ringlab::lessons {

namespace {

// The worlds a run of the lesson uses: --world-size, or the default (and
// the lesson's second world).
std::vector<int> worlds_of(const Lesson& lesson, const RunOptions& options) {
  if (options.world_size > 0) return {options.world_size};
  std::vector<int> worlds{lesson.default_world_size};
  if (lesson.then_world_size > 0) worlds.push_back(lesson.then_world_size);
  return worlds;
}

std::string worlds_text(const std::vector<int>& worlds) {
  std::string text = "world " + std::to_string(worlds[0]);
  for (std::size_t i = 1; i < worlds.size(); ++i) text += ", then " + std::to_string(worlds[i]);
  return text;
}

}  // namespace

std::string world_problem(const Lesson& lesson, int world) {
  if (world < 1) return "a world needs at least 1 rank";
  return lesson.world_problem ? lesson.world_problem(world) : std::string();
}

void run_lesson(const Lesson& lesson, const RunOptions& options) {
  const std::vector<int> worlds = worlds_of(lesson, options);
  for (int world : worlds)
    if (const std::string why = world_problem(lesson, world); !why.empty())
      throw std::invalid_argument("lesson " + std::string(lesson.name) + " cannot run on " +
                                  std::to_string(world) + (world == 1 ? " rank: " : " ranks: ") +
                                  why);
  for (int world : worlds)
    backends::run_ranks(
        options.backend, world, [&](ProcessGroup& pg) { lesson.run(pg, options.args); },
        options.group);
}

void run_tour(const RunOptions& options) {
  for (const Lesson& lesson : all_lessons()) {
    const std::vector<int> worlds = worlds_of(lesson, options);
    print("#", lesson.name, "(" + worlds_text(worlds) + "):", lesson.teaches);
    // At a --world-size the lesson cannot use, the tour says so and goes on.
    if (const std::string why = world_problem(lesson, worlds[0]); !why.empty()) {
      print("skipped:", why);
    } else {
      run_lesson(lesson, options);
    }
    print("");
  }
}

}  // namespace ringlab::lessons
