// The checker's side of `ringlab exercise check`: it runs the exercise's
// program (contained, process.hpp), passes on what the program prints as it
// prints it, gives every case a time limit, and decides the verdict from the
// evidence the program reports (evidence.hpp), never from its exit status.
//
// A case that has not come back within the limit (no report for that long)
// is named, with the ranks still in the learner's function, and the program
// and everything it started are ended. A program that ends before every case
// of every stage came back with the digest the closed form gives fails,
// whatever its exit status, with what was missing and why that happens
// (exit, _exit or an atexit handler in the learner's code).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "exercises/catalog.hpp"

namespace ringlab::exercises {

inline constexpr int kDefaultCaseSeconds = 10;
inline constexpr std::uint64_t kDefaultMemoryBytes = std::uint64_t{2} << 30;

struct SuperviseOptions {
  std::vector<std::string> stages;  // in order; empty: the simulator, then check_backends()
  std::chrono::seconds case_limit{kDefaultCaseSeconds};
  std::chrono::milliseconds wait_timeout{5000};  // every wait inside the program
  std::uint64_t memory_bytes = kDefaultMemoryBytes;
  std::string folder;                            // where the program runs; "" ours
  std::function<void(std::string_view)> print;   // what is printed, as it comes
};

struct CheckRun {
  bool passed = false;
  int interrupted = 0;  // SIGINT or SIGTERM ended the check (everything it ran is gone)
  std::string output;   // the program's output and the checker's lines, in order
};

// Runs program + {"check", "--stage", ..., "--timeout-ms", ..., "--report-fd", FD}
// (program: the exercise's program, or a program and the arguments before
// its verb) and returns the verdict.
CheckRun run_check(const Exercise& exercise, const std::vector<std::string>& program,
                   const SuperviseOptions& options);

// The limit a case gets: case_limit, but at least a second more than a wait
// may take, so that a rank waiting for a message nobody sends is explained
// by its wait's timeout (who waited for whom) rather than cut off.
std::chrono::seconds case_limit(const SuperviseOptions& options);

}  // namespace ringlab::exercises
