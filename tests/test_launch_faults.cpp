// Failures of real TCP ranks started by `ringlab run`: a rank killed in the
// middle of an all_reduce, a rank that stalls, and a wrong environment. Every
// case must end with a message that names the rank or the variable at fault,
// and within its timeout: nothing hangs. The ranks are tcp_fault_rank
// (tests/tcp_fault_rank.cpp).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/launcher.hpp"
#include "run_program.hpp"

namespace {

using Run = ringlab::testing::ProgramRun;
using ringlab::testing::kCleanEnvironment;
using ringlab::testing::run_shell;

// `ringlab run` of tcp_fault_rank on `ranks` ranks; the job is stopped after
// 60 s whatever happens.
std::string ringlab_run(int ranks, const std::string& launcher_flags,
                        const std::string& rank_flags) {
  return kCleanEnvironment + RINGLAB_EXE + " run --nproc-per-node " + std::to_string(ranks) +
         " --time-limit-ms 60000 " + launcher_flags + " -- " + FAULT_RANK_EXE + " " + rank_flags;
}

// The line rank r wrote about its failure ("tcp_fault_rank: rank r: ..."), or "".
std::string error_line_of(const std::string& output, int rank) {
  const std::string prefix = "tcp_fault_rank: rank " + std::to_string(rank) + ": ";
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// The ranks a line mentions ("rank 3"), other than `self`.
std::vector<int> ranks_named(const std::string& line, int self) {
  std::vector<int> ranks;
  for (std::size_t at = 0; (at = line.find("rank ", at)) != std::string::npos;) {
    at += 5;
    std::size_t digits = 0;
    while (at + digits < line.size() && std::isdigit(static_cast<unsigned char>(line[at + digits])))
      ++digits;
    if (digits == 0) continue;
    const int rank = std::stoi(line.substr(at, digits));
    if (rank != self) ranks.push_back(rank);
  }
  return ranks;
}

bool names(const std::string& line, int self, int rank) {
  const std::vector<int> named = ranks_named(line, self);
  return std::find(named.begin(), named.end(), rank) != named.end();
}

// The kill test's run, shared by its two test cases.
const Run& killed_rank_run() {
  // The survivors get 10 s to notice by themselves (well over their 3 s
  // timeout), so each writes its own error before the launcher steps in.
  static const Run run = run_shell(ringlab_run(4, "--timeout-ms 3000 --stop-after-ms 10000",
                                               "--iterations 6 --die-rank 2 --die-at 3"));
  return run;
}

}  // namespace

TEST_CASE("the fault rank passes when nobody fails (so its failures below mean something)") {
  const Run run = run_shell(ringlab_run(4, "--timeout-ms 10000", "--iterations 3 --elements 1000"));
  INFO(run.output);
  CHECK(run.status == 0);
  for (int r = 0; r < 4; ++r)
    CHECK(run.output.find("rank " + std::to_string(r) + ": 3 all_reduce ok\n") !=
          std::string::npos);
}

TEST_CASE("a rank killed in the middle of an all_reduce: every other rank fails, tracing it") {
  const Run& run = killed_rank_run();
  INFO(run.output);
  CHECK(run.status == 128 + 9);
  CHECK(run.output.find("ringlab run: rank 2 was killed by signal 9 (Killed); ") !=
        std::string::npos);
  // Each survivor's error names rank 2, or a survivor whose error leads back
  // to rank 2 the same way (a rank waiting on rank 3 learns that rank 3 left,
  // because rank 3 lost rank 2): follow the ranks each error names.
  for (int r : {0, 1, 3}) {
    CAPTURE(r);
    REQUIRE(!error_line_of(run.output, r).empty());
    std::vector<int> reached{r}, to_visit{r};
    while (!to_visit.empty()) {
      const int at = to_visit.back();
      to_visit.pop_back();
      for (int named : ranks_named(error_line_of(run.output, at), at))
        if (std::find(reached.begin(), reached.end(), named) == reached.end()) {
          reached.push_back(named);
          to_visit.push_back(named);
        }
    }
    CHECK(std::find(reached.begin(), reached.end(), 2) != reached.end());
  }
  CHECK(run.output.find("all_reduce ok") == std::string::npos);
  // Within the ranks' 3 s timeout (and some start-up), not the 10 s grace.
  CHECK(run.seconds < 8);
}

// A broken connection fails every pending wait of a rank (and its abort frame
// reaches the others), so even a rank waiting on another survivor names the
// dead one.
TEST_CASE("a rank killed in the middle of an all_reduce: every other rank names it") {
  const Run& run = killed_rank_run();
  INFO(run.output);
  for (int r : {0, 1, 3}) {
    CAPTURE(r);
    CHECK(names(error_line_of(run.output, r), r, 2));
  }
}

TEST_CASE("a stalled rank: the others time out, and the launcher blames the rank they waited for") {
  const Run run =
      run_shell(ringlab_run(3, "--timeout-ms 2000 --stop-after-ms 500 --kill-after-ms 1000",
                            "--iterations 4 --elements 1000 --stall-rank 1 --stall-at 2"));
  INFO(run.output);
  // A survivor failed first (its status is the job's); the stalled rank 1
  // said nothing and was stopped by the launcher, but it is the one to blame.
  CHECK(run.status == 1);
  CHECK(run.output.find("ringlab run: rank 1 did not respond (rank ") != std::string::npos);
  CHECK(run.output.find(" timed out waiting for it) and was stopped; ") != std::string::npos);
  // Whoever waited on rank 1 says so.
  const bool named_rank_1 = error_line_of(run.output, 0).find("rank 1") != std::string::npos ||
                            error_line_of(run.output, 2).find("rank 1") != std::string::npos;
  CHECK(named_rank_1);
  CHECK(run.seconds < 8);
}

// A frozen rank (SIGSTOP) says nothing and is caught only by the others'
// timeouts, whose errors may name another rank (one waiting on the frozen
// one); the launcher saw it stop and names it, wherever it froze.
TEST_CASE("a rank frozen with SIGSTOP is the one named, in all_reduce and in the rendezvous") {
  const std::string launcher = "--timeout-ms 1000 --stop-after-ms 300 --kill-after-ms 1000";
  struct Case {
    int rank, at;  // at -1: before the process group exists
  };
  for (const Case c : {Case{0, 1}, Case{1, 1}, Case{2, 1}, Case{3, 1}, Case{0, -1}, Case{2, -1}}) {
    CAPTURE(c.rank);
    CAPTURE(c.at);
    const Run run =
        run_shell(ringlab_run(4, launcher,
                              "--iterations 3 --elements 1000 --freeze-rank " +
                                  std::to_string(c.rank) + " --freeze-at " + std::to_string(c.at)));
    INFO(run.output);
    CHECK(run.status == 1);
    CHECK(run.output.find("ringlab run: rank " + std::to_string(c.rank) +
                          " was frozen by signal 19 (Stopped (signal)) and did not resume; ") !=
          std::string::npos);
    CHECK(run.seconds < 6);
  }
}

TEST_CASE("a wrong environment is named, with what to set") {
  const std::string rank = kCleanEnvironment + "RINGLAB_TIMEOUT_MS=1500 ";

  Run run = run_shell(rank + "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 " + FAULT_RANK_EXE);
  CHECK(run.status == 1);
  CHECK(run.output.find("MASTER_PORT is not set: export MASTER_PORT=") != std::string::npos);

  run = run_shell(rank + "RANK=2 WORLD_SIZE=2 MASTER_PORT=29500 " + FAULT_RANK_EXE);
  CHECK(run.status == 1);
  CHECK(run.output.find("RANK=2 but WORLD_SIZE=2: RANK must be in 0..1") != std::string::npos);

  run = run_shell(rank + "WORLD_SIZE=2 MASTER_PORT=29500 " + FAULT_RANK_EXE);
  CHECK(run.status == 1);
  CHECK(run.output.find("RANK is not set: export RANK=") != std::string::npos);

  // Rank 1 of a job whose rank 0 never comes: nobody listens at the port.
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  run = run_shell(rank + "RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                  std::to_string(port) + " " + FAULT_RANK_EXE);
  INFO(run.output);
  CHECK(run.status == 1);
  CHECK(run.output.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(run.output.find("MASTER_ADDR") != std::string::npos);
  CHECK(run.output.find("MASTER_PORT") != std::string::npos);
  CHECK(run.seconds < 6);
}

TEST_CASE("ringlab run refuses bad input with a clear message") {
  Run run = run_shell(std::string(RINGLAB_EXE) + " run --nproc-per-node 2");
  CHECK(run.status != 0);
  CHECK(run.output.find("no program to run: put it after --") != std::string::npos);
  run = run_shell(std::string(RINGLAB_EXE) + " run --nproc-per-node 0 -- true");
  CHECK(run.status != 0);
  CHECK(run.output.find("--nproc-per-node is 0: it must be at least 1") != std::string::npos);
  run = run_shell(std::string(RINGLAB_EXE) +
                  " run --nnodes 2 --node-rank 2 --master-port 29500 -- true");
  CHECK(run.status != 0);
  CHECK(run.output.find("--node-rank is 2 but --nnodes is 2") != std::string::npos);
  run = run_shell(std::string(RINGLAB_EXE) + " run --nproc-per-node 3 --stop-after-ms 100 -- " +
                  "sh -c 'if [ $RANK = 1 ]; then exit 7; fi; sleep 20'");
  CHECK(run.status == 7);
  CHECK(run.output == "ringlab run: rank 1 exited with status 7; stopped the other 2 ranks\n");
  CHECK(run.seconds < 5);
}
