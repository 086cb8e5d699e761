// Runs a lesson on every rank of a world, on the chosen backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lessons/lesson.hpp"

namespace ringlab::lessons {

// A backend runs body(pg) on every rank of a world. "inproc" is built in;
// others (tcp, nccl) register themselves from the file that implements them.
using BackendRunner = std::function<void(
    int world, const std::function<void(ProcessGroup&)>& body, const ProcessGroupOptions& group)>;
struct BackendRegistrar {
  BackendRegistrar(std::string name, std::string help, BackendRunner runner, bool preferred = false);
};
std::vector<std::string> backend_names();
std::string backends_help();    // "inproc (ranks as threads), tcp (...)"
std::string default_backend();  // the preferred registered backend, else inproc

struct RunOptions {
  int world_size = 0;  // 0: the lesson's default
  std::string backend = default_backend();
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
