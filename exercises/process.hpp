// Running another program and collecting what it printed: CMake to build an
// exercise, the exercise's program to check it. The program runs contained
// (containment.hpp: its own process group, a cgroup or a subreaper, a memory
// cap), with stdin from /dev/null (the terminal stays the caller's), stdout
// and stderr together into one pipe, and a time limit after which it and
// everything it started are killed. Ctrl-C (SIGINT) or SIGTERM while it runs
// ends it and everything it started before the caller hears of it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "exercises/containment.hpp"

namespace ringlab::exercises {

struct ProgramResult {
  int exit_status = -1;    // when it exited
  int signal_number = 0;   // when a signal ended it
  bool timed_out = false;  // we killed it at the limit
  int interrupted = 0;     // SIGINT or SIGTERM reached us: we ended it
  bool out_of_memory = false;  // its cgroup's memory.max killed a process
  std::string output;      // stdout and stderr, interleaved as written
  bool ok() const {
    return exit_status == 0 && signal_number == 0 && !timed_out && interrupted == 0;
  }
  // "exited with status 1", "was killed by signal 11 (Segmentation fault)",
  // "did not finish in time and was stopped".
  std::string describe() const;
};

// Thrown where a check or a build was ended by SIGINT or SIGTERM, once
// everything it ran has ended: the command ends as the signal would have
// ended it.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int signal) : std::runtime_error("interrupted"), signal_number(signal) {}
  int signal_number;
};

struct SpawnOptions {
  std::string folder;              // its working folder; "" for ours
  std::uint64_t memory_bytes = 0;  // containment.hpp; 0: no cap
  int keep_fd = -1;                // a descriptor it inherits, as the same number
};

// One program, started at construction and contained until it and every
// process it started have ended.
class Program {
 public:
  // argv[0] is looked up on PATH when it has no '/'. Throws
  // std::runtime_error when the program cannot be started at all.
  Program(const std::vector<std::string>& argv, const SpawnOptions& options);
  ~Program();  // ends whatever still runs
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  int output_fd() const { return output_; }  // non-blocking; -1 once it closed
  // Appends what the pipe holds now; false once it has closed.
  bool read_output(std::string& into);
  // Whether the program has exited (reaped here; its status is in result).
  bool exited();
  // Kills it and everything it started; reaps it.
  void stop();
  // Once exited() or stop(): ends what it left running, reads what is left
  // of its output, and returns how it ended.
  ProgramResult finish();

 private:
  pid_t pid_ = -1;
  int output_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::unique_ptr<Containment> containment_;
  std::string collected_;
};

// SIGINT and SIGTERM while one lives are bytes in a pipe (read_end), for a
// poll loop; the previous handlers come back with its end.
class Interrupts {
 public:
  Interrupts();
  ~Interrupts();
  int read_end() const;
  // The last SIGINT/SIGTERM received, or 0.
  int received();

 private:
  struct Pipe;
  std::unique_ptr<Pipe> pipe_;
  int received_ = 0;
};

// Runs argv to its end or to the limit, printing nothing; `on_output` (if
// given) sees the output as it comes.
ProgramResult run_program(const std::vector<std::string>& argv, std::chrono::seconds limit,
                          const std::string& folder = "",
                          const std::function<void(std::string_view)>& on_output = nullptr);

}  // namespace ringlab::exercises
