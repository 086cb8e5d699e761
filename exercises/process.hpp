// Running another program and collecting what it printed: CMake to build an
// exercise, the exercise's program to check it. The program runs in a
// process group of its own, with stdin from /dev/null (the terminal stays
// the caller's), stdout and stderr together into one pipe, and a time limit
// after which the whole group is killed.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ringlab::exercises {

struct ProgramResult {
  int exit_status = -1;    // when it exited
  int signal_number = 0;   // when a signal ended it
  bool timed_out = false;  // we killed it at the limit
  std::string output;      // stdout and stderr, interleaved as written
  bool ok() const { return exit_status == 0 && signal_number == 0 && !timed_out; }
  // "exited with status 1", "was killed by signal 11 (Segmentation fault)",
  // "did not finish within 120 s".
  std::string describe() const;
};

// argv[0] is looked up on PATH when it has no '/'. Throws std::runtime_error
// when the program cannot be started at all (named in the message).
ProgramResult run_program(const std::vector<std::string>& argv, std::chrono::seconds limit,
                          const std::string& folder = "");

}  // namespace ringlab::exercises
