#include "lessons/runner.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace ringlab::lessons {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// The worlds a run of the lesson uses: --world-size, or the world of the job
// a launcher (ringlab run, torchrun, srun, mpirun, horovodrun) started this
// process in, or the default (and the lesson's second world).
std::vector<int> worlds_of(const Lesson& lesson, const RunOptions& options) {
  if (options.world_size > 0) return {options.world_size};
  if (const int launched = backends::launched_world_size(); launched > 0) return {launched};
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

// Runs the lesson on every world it uses; with `announce`, rank 0 of each
// world first says which algorithm runs (on stderr).
void run_worlds(const Lesson& lesson, const RunOptions& options, bool announce) {
  if (lesson.run_itself) {
    lesson.run_itself(options);
    return;
  }
  const ProcessGroupOptions group = lesson_group_options(lesson, options.group);
  const std::string statement = announce ? algorithm_statement(lesson, options.group) : "";
  for (int world : worlds_of(lesson, options))
    backends::run_ranks(
        backend_of(options), world,
        [&](ProcessGroup& pg) {
          // Once per world, also when every rank is a process of its own.
          if (!statement.empty() && pg.rank() == 0) {
            const std::string line =
                "# lesson " + std::string(lesson.name) + ": " + statement + "\n";
            std::fwrite(line.data(), 1, line.size(), stderr);
          }
          lesson.run(pg, options.args);
        },
        group, options.trace);
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
  return worlds_of(lesson, options).front();
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

namespace {
// The lessons --dtype applies to, for its refusal.
std::string dtype_lessons() {
  std::string names;
  for (const Lesson& l : all_lessons())
    if (l.takes_dtype) names += (names.empty() ? "" : ", ") + std::string(l.name);
  return names;
}

void check_dtype(const Lesson& lesson, const std::optional<DType>& dtype) {
  if (!dtype) return;
  if (!lesson.takes_dtype)
    throw std::invalid_argument("--dtype " + std::string(dtype_name(*dtype)) + ": lesson " +
                                std::string(lesson.name) +
                                " keeps its article's dtypes; --dtype is for seed 001's programs (" +
                                dtype_lessons() + ")");
  if (*dtype == DType::Bool)
    throw std::invalid_argument(
        "--dtype bool: the article's program cannot make its tensors in bool (PyTorch refuses "
        "torch.arange(2, dtype=torch.bool): \"arange_cpu\" not implemented for 'Bool', and "
        "tensor += 1 on a bool tensor: result type Long can't be cast to the desired output type "
        "Bool): use another dtype");
}
}  // namespace

void check_options(const Lesson& lesson, const RunOptions& options) {
  const std::string name(lesson.name);
  check_dtype(lesson, options.args.dtype);
  if (lesson.run_itself && !options.backend.empty())
    throw std::invalid_argument("lesson " + name +
                                " runs on every backend itself, a column each: leave --backend " +
                                options.backend + " out");
  backends::find_backend(backend_of(options));  // names the backends when unknown
  for (int world : worlds_of(lesson, options)) {
    if (const std::string why = world_problem(lesson, world); !why.empty())
      throw std::invalid_argument("lesson " + name + " cannot run on " + std::to_string(world) +
                                  (world == 1 ? " rank: " : " ranks: ") + why);
    check_root(lesson, options.args.root, world);
  }
  check_algorithms(options.group);
}

void run_lesson(const Lesson& lesson, const RunOptions& options) {
  check_options(lesson, options);
  run_worlds(lesson, options, true);
}

bool print_tour_header(const Lesson& lesson, const RunOptions& options) {
  const std::vector<int> worlds = worlds_of(lesson, options);
  if (const std::string why = world_problem(lesson, worlds.front()); !why.empty()) {
    // Said in the header: a --world-size the lesson cannot use skips it
    // (under a launcher every rank's world is that size).
    print("#", lesson.name, "(skipped: not on",
          std::to_string(worlds.front()) + " ranks):", lesson.teaches);
    print("skipped:", why);
    return false;
  }
  const std::string statement = algorithm_statement(lesson, options.group);
  print("#", lesson.name, "(" + worlds_text(worlds) + "):",
        std::string(lesson.teaches) + (statement.empty() ? "" : " [" + statement + "]"));
  if (lesson.not_in_tour.empty()) return true;
  print("not run in the tour:", lesson.not_in_tour);
  return false;
}

void check_tour_options(const RunOptions& options) {
  backends::find_backend(backend_of(options));
  check_algorithms(options.group);
}

std::span<const Lesson> tour_lessons(std::string_view from) {
  const std::span<const Lesson> lessons = all_lessons();
  if (from.empty()) return lessons;
  try {
    return lessons.subspan(static_cast<std::size_t>(&find_lesson(from) - lessons.data()));
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(std::string("--from: ") + error.what());
  }
}

void run_tour(const RunOptions& options, std::string_view from) {
  // What every lesson shares is checked before the first one starts.
  check_tour_options(options);
  for (const Lesson& lesson : tour_lessons(from)) {
    if (print_tour_header(lesson, options)) {
      if (lesson.run_itself) {
        RunOptions every_backend = options;  // it runs them all, a column each
        every_backend.backend.clear();
        run_worlds(lesson, every_backend, false);
      } else {
        run_worlds(lesson, options, false);
      }
    }
    print("");
  }
}

}  // namespace ringlab::lessons
