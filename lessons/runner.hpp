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

// Runs one lesson with backends::run_ranks.
void run_lesson(const Lesson& lesson, const RunOptions& options);

// Every lesson at its default world size, each after a "# name (world N)"
// header: the terminal tour of the README's main command.
void run_tour(const RunOptions& options);

}  // namespace ringlab::lessons
