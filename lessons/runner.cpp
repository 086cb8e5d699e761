#include "lessons/runner.hpp"

#include <cstdio>
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

// The caller named an algorithm for c ("" and "default" name none).
bool named(const ProcessGroupOptions& group, Collective c) {
  const auto it = group.algorithms.find(c);
  return it != group.algorithms.end() && !it->second.empty() && it->second != "default";
}

// Runs the lesson on every world it uses; with `announce`, rank 0 of each
// world first says which algorithm runs (on stderr).
void run_worlds(const Lesson& lesson, const RunOptions& options, bool announce) {
  const ProcessGroupOptions group = lesson_group_options(lesson, options.group);
  const std::string statement = announce ? algorithm_statement(lesson, options.group) : "";
  for (int world : worlds_of(lesson, options))
    backends::run_ranks(
        options.backend, world,
        [&](ProcessGroup& pg) {
          // Once per world, also when every rank is a process of its own.
          if (!statement.empty() && pg.rank() == 0) {
            const std::string line =
                "# lesson " + std::string(lesson.name) + ": " + statement + "\n";
            std::fwrite(line.data(), 1, line.size(), stderr);
          }
          lesson.run(pg, options.args);
        },
        group);
}

}  // namespace

std::string world_problem(const Lesson& lesson, int world) {
  if (world < 1) return "a world needs at least 1 rank";
  return lesson.world_problem ? lesson.world_problem(world) : std::string();
}

ProcessGroupOptions lesson_group_options(const Lesson& lesson, const ProcessGroupOptions& group) {
  ProcessGroupOptions options = group;
  if (lesson.collective && !lesson.algorithm.empty() && !named(group, *lesson.collective))
    options.algorithms[*lesson.collective] = std::string(lesson.algorithm);
  return options;
}

std::string algorithm_statement(const Lesson& lesson, const ProcessGroupOptions& group) {
  if (!lesson.collective) return "";
  const Collective c = *lesson.collective;
  const std::string why = named(group, c)             ? "as chosen"
                          : !lesson.algorithm.empty() ? "the article's"
                                                      : "the default";
  return std::string(collective_name(c)) + " algorithm " +
         algorithm_in_effect(lesson_group_options(lesson, group), c) + " (" + why + ")";
}

void run_lesson(const Lesson& lesson, const RunOptions& options) {
  for (int world : worlds_of(lesson, options))
    if (const std::string why = world_problem(lesson, world); !why.empty())
      throw std::invalid_argument("lesson " + std::string(lesson.name) + " cannot run on " +
                                  std::to_string(world) + (world == 1 ? " rank: " : " ranks: ") +
                                  why);
  run_worlds(lesson, options, true);
}

void run_tour(const RunOptions& options) {
  for (const Lesson& lesson : all_lessons()) {
    const std::vector<int> worlds = worlds_of(lesson, options);
    const std::string statement = algorithm_statement(lesson, options.group);
    print("#", lesson.name, "(" + worlds_text(worlds) + "):",
          std::string(lesson.teaches) + (statement.empty() ? "" : " [" + statement + "]"));
    // At a --world-size the lesson cannot use, the tour says so and goes on.
    if (const std::string why = world_problem(lesson, worlds[0]); !why.empty()) {
      print("skipped:", why);
    } else {
      run_worlds(lesson, options, false);
    }
    print("");
  }
}

}  // namespace ringlab::lessons
