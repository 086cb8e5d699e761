#include "lessons/runner.hpp"

namespace ringlab::lessons {

namespace {

// The caller named an algorithm for c ("" and "default" name none).
bool named(const ProcessGroupOptions& group, Collective c) {
  const auto it = group.algorithms.find(c);
  return it != group.algorithms.end() && !it->second.empty() && it->second != "default";
}

void run_ranks_of(const Lesson& lesson, const RunOptions& options, bool announce) {
  const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
  const ProcessGroupOptions group = lesson_group_options(lesson, options.group);
  const std::string statement = announce ? algorithm_statement(lesson, options.group) : "";
  backends::run_ranks(
      options.backend, world,
      [&](ProcessGroup& pg) {
        // Once per world, also when every rank is a process of its own.
        if (!statement.empty() && pg.rank() == 0) {
          const std::string line = "# lesson " + std::string(lesson.name) + ": " + statement + "\n";
          std::fwrite(line.data(), 1, line.size(), stderr);
        }
        lesson.run(pg, options.args);
      },
      group);
}

}  // namespace

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
  run_ranks_of(lesson, options, true);
}

void run_tour(const RunOptions& options) {
  for (const Lesson& lesson : all_lessons()) {
    const int world = options.world_size > 0 ? options.world_size : lesson.default_world_size;
    const std::string statement = algorithm_statement(lesson, options.group);
    print("#", lesson.name, "(world", std::to_string(world) + "):",
          std::string(lesson.teaches) + (statement.empty() ? "" : " [" + statement + "]"));
    run_ranks_of(lesson, options, false);
    print("");
  }
}

}  // namespace ringlab::lessons
