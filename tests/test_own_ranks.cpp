// A program that starts its own tcp ranks (tests/own_ranks.cpp): the ranks
// are forked at the call to run_ranks (backends/rank_processes.hpp). What
// must hold however that is done: every line printed once and in order, a
// failed, killed or hung rank named in an exception the program catches (the
// library ends nothing), answers back from processes, and nothing done to the
// process before main.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "run_program.hpp"

namespace {

using ringlab::testing::kCleanEnvironment;
using ringlab::testing::ProgramRun;
using ringlab::testing::run_shell;

ProgramRun own_ranks(const std::string& mode, const std::string& environment = "") {
  const ProgramRun run =
      run_shell(kCleanEnvironment + environment + " " + OWN_RANKS_EXE + " " + mode);
  INFO("own_ranks " << mode << " printed:\n" << run.output);
  return run;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("a program that runs two worlds prints each line once, in order") {
  const ProgramRun run = own_ranks("twice");
  INFO(run.output);
  REQUIRE(run.status == 0);
  // The first line was still in the program's stdout buffer when the ranks
  // were forked: printed once, not once more by each rank.
  for (const char* line : {"before the worlds\n", "between the worlds\n", "after the worlds\n",
                           "world 1 rank 0\n", "world 1 rank 1\n", "world 2 rank 0\n",
                           "world 2 rank 1\n", "world 2 rank 2\n"})
    CHECK(count(run.output, line) == 1);
  CHECK(count(run.output, "world 1 rank 2") == 0);
  const auto at = [&](const std::string& what) { return run.output.find(what); };
  CHECK(at("before the worlds") < at("world 1 rank 0"));
  CHECK(at("before the worlds") < at("world 1 rank 1"));
  CHECK(std::max(at("world 1 rank 0"), at("world 1 rank 1")) < at("between the worlds"));
  CHECK(at("between the worlds") < at("world 2 rank 0"));
  CHECK(std::max({at("world 2 rank 0"), at("world 2 rank 1"), at("world 2 rank 2")}) <
        at("after the worlds"));
}

TEST_CASE("a rank that fails in a self-started world fails the call, naming the rank") {
  const ProgramRun run = own_ranks("fail");
  INFO(run.output);
  // The program caught the exception and chose its own status.
  CHECK(run.status == 3);
  CHECK_FALSE(has(run.output, "run_ranks returned"));
  // The rank's own error, printed by the rank, then the blame: rank 2, not
  // one of the ranks that lost it in the all_reduce.
  CHECK(has(run.output, "own_ranks: error: rank 2: deliberate failure"));
  CHECK(has(run.output, "caught: tcp backend: rank 2 exited with status 1"));
  CHECK(has(run.output, "its error is above"));
}

TEST_CASE("a rank killed by a signal is named") {
  const ProgramRun run = own_ranks("killed");
  INFO(run.output);
  CHECK(run.status == 3);
  CHECK(has(run.output, "caught: tcp backend: rank 1 was killed by"));
  CHECK(has(run.output, "signal 9"));
}

TEST_CASE("a hung rank is stopped: the others' timeouts end the world, naming it") {
  const ProgramRun run = own_ranks("hang");
  INFO(run.output);
  CHECK(run.status == 3);
  CHECK(has(run.output, "caught after"));
  CHECK(has(run.output, "rank 3"));
  // Rank 3 sleeps 60 s; the others give up after 1.5 s and the launcher
  // stops it.
  CHECK(run.seconds < 30);
}

TEST_CASE("run_ranks_collecting: every rank's answer, from processes as from threads") {
  const ProgramRun run = own_ranks("answers");
  INFO(run.output);
  REQUIRE(run.status == 0);
  for (const std::string backend : {"tcp", "inproc"}) {
    CHECK(has(run.output, backend + " answer 1: 1048576 bytes\n"));
    for (const char* r : {"0", "2"})
      CHECK(has(run.output, backend + " answer " + r + ": rank " + r));
  }
  // A forked rank finds torchrun's variables in its environment, not
  // ringlab's own (the job token is handed over as an argument only).
  CHECK(has(run.output, "tcp answer 0: rank 0 RANK=0 RINGLAB_JOB_TOKEN unset\n"));
  CHECK(has(run.output, "tcp answer 2: rank 2 RANK=2 RINGLAB_JOB_TOKEN unset\n"));
  CHECK(has(run.output, "inproc answer 2: rank 2 RANK=unset RINGLAB_JOB_TOKEN unset\n"));
}

TEST_CASE("nothing is done to a program before main, whatever its environment holds") {
  // The variables earlier versions passed between a program and the copies
  // of itself it started, set as such a copy had them.
  const ProgramRun run = own_ranks(
      "before_main", "RINGLAB_RUN_CALL=0 RINGLAB_TRACE=/tmp/t.json RINGLAB_TRACE_DIR=/tmp");
  CHECK(run.output == "before main: nothing changed\n");
  CHECK(run.status == 0);
  const ProgramRun plain = own_ranks("before_main");
  CHECK(plain.output == "before main: nothing changed\n");
}

TEST_CASE("ranks are forked only while the program runs one thread; otherwise it says why") {
  const ProgramRun run = own_ranks("threaded");
  CHECK(run.status == 0);
  CHECK(has(run.output, "caught: cannot start rank 0 as a fork of this program: it runs 2 "
                        "threads, and a fork copies only the calling one"));
  CHECK_FALSE(has(run.output, "forked while 2 threads ran"));
  // Refused before any rank started; once the other thread has ended, the
  // same world runs, each rank once.
  CHECK(count(run.output, "rank 0 ran\n") == 1);
  CHECK(count(run.output, "rank 1 ran\n") == 1);
}
