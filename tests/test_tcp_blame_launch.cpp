// The right rank is blamed by real ranks under `ringlab run` (issue 12, item
// 6): a rank frozen with SIGSTOP in the middle of a job made its peers blame
// one another ("rank 0 blames rank 3"). Every survivor's first error line must
// name the frozen rank first after its own, which is what the launcher reads.
// The ranks are tcp_fault_rank (tests/tcp_fault_rank.cpp).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "launcher/blame.hpp"
#include "run_program.hpp"

namespace {

using ringlab::testing::kCleanEnvironment;
using ringlab::testing::run_shell;
// The rank a message names first after the writer's own: what the launcher reads
// from a rank's error (launcher/blame.hpp).
using ringlab::launch::first_other_rank_named;

// The first line rank r wrote about its failure ("tcp_fault_rank: rank r: ..."), or "".
std::string error_line_of(const std::string& output, int rank) {
  const std::string prefix = "tcp_fault_rank: rank " + std::to_string(rank) + ": ";
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

}  // namespace

TEST_CASE(
    "a rank frozen in an all_reduce under ringlab run: every survivor's error names it first") {
  for (int frozen = 0; frozen < 4; ++frozen) {
    CAPTURE(frozen);
    const auto run = run_shell(
        kCleanEnvironment + RINGLAB_EXE +
        " run --nproc-per-node 4 --time-limit-ms 30000 --timeout-ms 1500 --stop-after-ms 1500 "
        "--kill-after-ms 500 -- " +
        FAULT_RANK_EXE + " --iterations 4 --elements 65536 --freeze-rank " +
        std::to_string(frozen) + " --freeze-at 2");
    INFO(run.output);
    CHECK(run.status != 0);
    for (int rank = 0; rank < 4; ++rank) {
      if (rank == frozen) continue;
      CAPTURE(rank);
      const std::string line = error_line_of(run.output, rank);
      CHECK(line != "");
      CHECK(first_other_rank_named(line.substr(line.find(':') + 1), rank) == frozen);
    }
    CHECK(run.seconds < 10);
  }
}
