#include "lessons/runner.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ringlab::lessons {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Every --algorithm COLLECTIVE=NAME names an algorithm of that collective's
// table (primitives/algorithms.hpp); "" and "default" name the default.
void check_algorithms(const ProcessGroupOptions& group) {
  for (const auto& [collective, name] : group.algorithms) {
    if (name.empty() || name == "default") continue;
    const std::vector<std::string> names = algorithm_names(collective);
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string c(collective_name(collective));
    throw std::invalid_argument("--algorithm " + c + "=" + name + ": " + c + " has no algorithm '" +
                                name + "': use one of " + joined(names));
  }
}

// The lessons that take --root, and what it names in each: "broadcast (src),
// scatter (src), ...".
std::string rooted_lessons() {
  std::vector<std::string> rooted;
  for (const Lesson& lesson : all_lessons())
    if (!lesson.root.empty())
      rooted.push_back(std::string(lesson.name) + " (" + std::string(lesson.root) + ")");
  return joined(rooted);
}

void check_root(const Lesson& lesson, int root, int world) {
  if (root < 0) return;  // not given: the article's choice
  const std::string name(lesson.name);
  if (lesson.root.empty())
    throw std::invalid_argument("lesson " + name + " has no src or dst rank, so --root " +
                                std::to_string(root) + " would change nothing: leave it out. " +
                                "--root is for " + rooted_lessons());
  if (root < world) return;
  throw std::invalid_argument(
      "lesson " + name + ": --root " + std::to_string(root) + " names the " +
      std::string(lesson.root) + " rank, but a world of " + std::to_string(world) +
      " ranks has ranks 0 to " + std::to_string(world - 1) + ": pass a --root below " +
      std::to_string(world) + ", or --world-size " + std::to_string(root + 1) + " or more");
}

}  // namespace

std::string world_problem(const Lesson& lesson, int world) {
  if (world < 1) return "a world needs at least 1 rank";
  return lesson.world_problem ? lesson.world_problem(world) : std::string();
}

std::string backend_of(const RunOptions& options) {
  return options.backend.empty() ? backends::default_backend() : options.backend;
}

int world_size_of(const Lesson& lesson, const RunOptions& options) {
  return options.world_size > 0 ? options.world_size : lesson.default_world_size;
}

void check_options(const Lesson& lesson, const RunOptions& options) {
  const std::string name(lesson.name);
  if (lesson.run_itself && !options.backend.empty())
    throw std::invalid_argument("lesson " + name +
                                " runs on every backend itself, a column each: leave --backend " +
                                options.backend + " out");
  backends::find_backend(backend_of(options));  // names the backends when unknown
  const int world = world_size_of(lesson, options);
  if (const std::string why = world_problem(lesson, world); !why.empty())
    throw std::invalid_argument("lesson " + name + " cannot run on " + std::to_string(world) +
                                (world == 1 ? " rank: " : " ranks: ") + why);
  check_root(lesson, options.args.root, world);
  check_algorithms(options.group);
}

void run_lesson(const Lesson& lesson, const RunOptions& options) {
  check_options(lesson, options);
  if (lesson.run_itself) {
    lesson.run_itself(options);
    return;
  }
  backends::run_ranks(
      backend_of(options), world_size_of(lesson, options),
      [&](ProcessGroup& pg) { lesson.run(pg, options.args); }, options.group);
}

void run_tour(const RunOptions& options) {
  // What every lesson shares is checked before the first one starts.
  backends::find_backend(backend_of(options));
  check_algorithms(options.group);
  for (const Lesson& lesson : all_lessons()) {
    const int world = world_size_of(lesson, options);
    if (const std::string why = world_problem(lesson, world); !why.empty()) {
      // Said in the header: a --world-size the lesson cannot use skips it
      // (under a launcher every rank's world is that size).
      print("#", lesson.name, "(skipped: not on",
            std::to_string(world) + " ranks):", lesson.teaches);
      print("skipped:", why);
      print("");
      continue;
    }
    print("#", lesson.name, "(world", std::to_string(world) + "):", lesson.teaches);
    if (lesson.run_itself) {
      RunOptions every_backend = options;  // it runs them all, a column each
      every_backend.backend.clear();
      run_lesson(lesson, every_backend);
    } else {
      run_lesson(lesson, options);
    }
    print("");
  }
}

}  // namespace ringlab::lessons
