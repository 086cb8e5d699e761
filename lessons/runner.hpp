// Runs a lesson on every rank of a world, on the chosen backend.
#pragma once

#include <string>

#include "lessons/lesson.hpp"

namespace ringlab::lessons {

struct RunOptions {
  int world_size = 0;  // 0: the lesson's default
  std::string backend = "inproc";
  LessonArgs args;
  ProcessGroupOptions group;
};

// Ranks as threads over the in-process transport.
void run_inproc(const Lesson& lesson, const RunOptions& options);

// Every lesson at its default world size, each after a "# name (world N)"
// header: the terminal tour of the README's main command.
void run_tour(const RunOptions& options);

}  // namespace ringlab::lessons
