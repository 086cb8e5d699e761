// Runs a lesson on every rank of a world, on the chosen backend
// (backends/backends.hpp).
#pragma once

#include <string>

#include "backends/backends.hpp"
#include "lessons/lesson.hpp"

namespace ringlab::lessons {

struct RunOptions {
  int world_size = 0;  // 0: the lesson's default
  std::string backend = backends::default_backend();
  LessonArgs args;
  ProcessGroupOptions group;
};

// The group options a lesson runs with: the caller's, plus the algorithm its
// article implies where the caller named none for that collective.
ProcessGroupOptions lesson_group_options(const Lesson& lesson, const ProcessGroupOptions& group);

// Which algorithm the lesson's collective runs with these options, and why:
// "all_reduce algorithm ring (the article's)", "broadcast algorithm binomial
// (the default)", "... (as chosen)". "" for a point-to-point lesson.
std::string algorithm_statement(const Lesson& lesson, const ProcessGroupOptions& group);

// Runs one lesson with backends::run_ranks. Its rank 0 first writes
// "# lesson NAME: <algorithm_statement>" to stderr: stdout stays what the
// article's program prints.
void run_lesson(const Lesson& lesson, const RunOptions& options);

// Every lesson at its default world size, each after a "# name (world N):
// what it teaches [<algorithm_statement>]" header: the terminal tour of the
// README's main command.
void run_tour(const RunOptions& options);

}  // namespace ringlab::lessons
