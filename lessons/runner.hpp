// Runs a lesson on every rank of a world, on the chosen backend.
#pragma once

#include <functional>
#include <string>

#include "lessons/lesson.hpp"

namespace ringlab::lessons {

struct RunOptions {
  int world_size = 0;  // 0: the lesson's default
  std::string backend = "inproc";
  LessonArgs args;
  ProcessGroupOptions group;
};

// Runs body(pg) on every rank of a world of `world` ranks on `backend`
// ("inproc": ranks are threads of this process). Rethrows the first failure.
void run_ranks(const std::string& backend, int world,
               const std::function<void(ProcessGroup&)>& body, const ProcessGroupOptions& group);

// Runs one lesson with run_ranks.
void run_lesson(const Lesson& lesson, const RunOptions& options);

// Every lesson at its default world size, each after a "# name (world N)"
// header: the terminal tour of the README's main command.
void run_tour(const RunOptions& options);

}  // namespace ringlab::lessons
