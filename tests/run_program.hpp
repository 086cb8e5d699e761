// Runs a command line for a test and collects what it printed (stdout and
// stderr together), its exit status and how long it took.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace ringlab::testing {

struct ProgramRun {
  int status;  // the exit status, or -1 if it did not exit normally
  std::string output;
  double seconds;
};

inline ProgramRun run_shell(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  // stdin from /dev/null: a program that would ask a terminal (the paced
  // tour) runs as it does when piped, whoever runs the tests.
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      popen(("exec < /dev/null; " + command + " 2>&1").c_str(), "r"), pclose);
  REQUIRE(pipe);
  std::string output;
  std::array<char, 4096> chunk{};
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe.get()))
    output.append(chunk.data(), n);
  const int status = pclose(pipe.release());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output, seconds};
}

// No launcher variables from whoever runs the tests, so a lesson starts its
// own ranks.
inline const std::string kCleanEnvironment =
    "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u MASTER_ADDR -u MASTER_PORT -u SLURM_PROCID "
    "-u SLURM_NTASKS -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE "
    "-u RINGLAB_TIMEOUT_MS -u RINGLAB_BIND_ADDR -u RINGLAB_TRACE_DIR "
    "-u RINGLAB_TRACE_MAX_EVENTS -u RINGLAB_TRACE_ORIGIN_NS -u RINGLAB_JOB_TOKEN ";

#ifdef RINGLAB_EXE
// `ringlab ARGUMENTS` from the build tree, in a clean environment.
inline ProgramRun run_ringlab(const std::string& arguments) {
  return run_shell(kCleanEnvironment + RINGLAB_EXE + " " + arguments);
}
#endif

}  // namespace ringlab::testing
