// The blame rules (launcher/blame.hpp) on timelines written by hand: which
// rank a failed job is blamed on, by time and cause.
#include <doctest/doctest.h>

#include <vector>

#include "launcher/blame.hpp"

namespace {

using namespace std::chrono_literals;
using ringlab::launch::Blame;
using ringlab::launch::BlameKind;
using ringlab::launch::find_cause;
using ringlab::launch::first_other_rank_named;
using ringlab::launch::RankEvents;

const RankEvents::Time t0{};  // the start of every timeline

RankEvents exited(int rank, std::chrono::milliseconds at, int status = 1) {
  RankEvents r;
  r.rank = rank;
  r.ended = t0 + at;
  r.failed = status != 0;
  return r;
}

RankEvents killed(int rank, std::chrono::milliseconds at, int signal, bool by_us = false) {
  RankEvents r = exited(rank, at);
  r.signal_number = signal;
  r.stopped_by_us = by_us;
  return r;
}

RankEvents reported(RankEvents r, std::chrono::milliseconds at, std::string error) {
  r.error_at = t0 + at;
  r.error = std::move(error);
  return r;
}

int blamed(const std::vector<RankEvents>& ranks) {
  const auto blame = find_cause(ranks);
  return blame ? blame->rank : -1;
}

}  // namespace

TEST_CASE("nobody failed: nobody is blamed") {
  CHECK_FALSE(find_cause({exited(0, 10ms, 0), exited(1, 20ms, 0)}));
  // An error line of a rank that then succeeded is no failure.
  CHECK_FALSE(
      find_cause({reported(exited(0, 10ms, 0), 5ms, "rank 0: warning"), exited(1, 20ms, 0)}));
}

TEST_CASE("the first to fail is blamed, by the time it reported, not the time it exited") {
  CHECK(blamed({exited(0, 300ms), exited(1, 100ms), exited(2, 200ms)}) == 1);
  // Rank 0 reported at 50 ms and took until 900 ms to exit.
  CHECK(blamed({reported(exited(0, 900ms), 50ms, "rank 0: bad input"), exited(1, 100ms)}) == 0);
  // Stopped by us after reporting: still the first failure.
  CHECK(blamed({reported(killed(0, 900ms, 15, true), 50ms, "rank 0: bad input"),
                exited(1, 100ms)}) == 0);
}

TEST_CASE("of two reports at the same time, the rank that ended first is blamed") {
  // Error files written in the same tick of the kernel's coarse clock.
  CHECK(blamed({reported(exited(0, 90ms), 10ms, "rank 0: lost rank 2"),
                reported(exited(2, 40ms), 10ms, "rank 2: bad input"),
                reported(exited(1, 95ms), 10ms, "rank 1: lost rank 2")}) == 2);
}

TEST_CASE("a rank killed by someone else's signal just after the first report is the cause") {
  // Rank 2 was SIGKILLed; rank 0 noticed and reported before the launcher reaped rank 2.
  const std::vector<RankEvents> ranks{
      reported(exited(0, 30ms), 10ms, "rank 0: rank 2 closed its connection"), killed(2, 12ms, 9),
      exited(1, 40ms)};
  const auto blame = find_cause(ranks);
  REQUIRE(blame);
  CHECK(blame->rank == 2);
  CHECK(blame->kind == BlameKind::Failed);
  // Outside the window it is not taken as the cause.
  CHECK(blamed({reported(exited(0, 30ms), 10ms, "rank 0: own error"), killed(2, 700ms, 9)}) == 0);
  // Our own signal is never a cause.
  CHECK(blamed({reported(exited(0, 30ms), 10ms, "rank 0: own error"), killed(2, 12ms, 9, true)}) ==
        0);
}

TEST_CASE("a frozen rank is blamed from the moment it froze") {
  RankEvents frozen = killed(3, 2500ms, 15, true);  // we stopped it in the end
  frozen.frozen_since = t0 + 100ms;
  const std::vector<RankEvents> ranks{
      reported(exited(0, 2100ms), 2000ms, "rank 0: timed out waiting for rank 1"),
      reported(exited(1, 2100ms), 2050ms, "rank 1: timed out waiting for rank 3"),
      reported(exited(2, 2100ms), 2060ms, "rank 2: timed out waiting for rank 3"), frozen};
  const auto blame = find_cause(ranks);
  REQUIRE(blame);
  CHECK(blame->rank == 3);
  CHECK(blame->kind == BlameKind::Frozen);
}

TEST_CASE("a rank that the first timeout waited for, and that never answered, is unresponsive") {
  const std::vector<RankEvents> ranks{
      reported(exited(0, 2200ms), 2100ms, "rank 0: rank 2 shut down its transport"),
      killed(1, 2600ms, 15, true),  // asleep: said nothing, stopped by us
      reported(exited(2, 2010ms), 2000ms,
               "rank 2 timed out after 2000 ms waiting to receive from rank 1 (collective #4)")};
  const auto blame = find_cause(ranks);
  REQUIRE(blame);
  CHECK(blame->rank == 1);
  CHECK(blame->kind == BlameKind::Unresponsive);
  CHECK(blame->reporter == 2);
}

TEST_CASE("a rank named by the first report is not blamed when it answered or was gone") {
  const RankEvents timeout = reported(
      exited(2, 2010ms), 2000ms, "rank 2 timed out after 2000 ms waiting to receive from rank 1");
  // It reported an error of its own.
  CHECK(blamed({timeout, reported(killed(1, 2600ms, 15, true), 2300ms, "rank 1: lost rank 2")}) ==
        2);
  // It failed by itself.
  CHECK(blamed({timeout, exited(1, 2300ms)}) == 2);
  // It had finished (exit 0) before anyone waited for it: a mismatch, not a hang.
  CHECK(blamed({timeout, exited(1, 500ms, 0)}) == 2);
  // The report is not of a wait: rank 2's own error merely mentions rank 1.
  CHECK(blamed({reported(exited(2, 2010ms), 2000ms, "rank 2: got 7 from rank 1, expected 3"),
                killed(1, 2600ms, 15, true)}) == 2);
}

TEST_CASE("a rank the first report names, and that failed by itself just after, is the cause") {
  // Rank 2's line was read first; rank 3, which it names, failed 20 ms later.
  CHECK(blamed({reported(exited(2, 60ms), 10ms, "rank 2: rank 3 failed or stopped answering"),
                reported(exited(3, 40ms, 3), 30ms, "rank 3: failing on request")}) == 3);
  // Not when the named rank failed long after (it is a consequence then), or
  // was stopped by us.
  CHECK(blamed({reported(exited(2, 60ms), 10ms, "rank 2: rank 3 failed or stopped answering"),
                exited(3, 900ms, 3)}) == 2);
  CHECK(blamed({reported(exited(2, 60ms), 10ms, "rank 2: rank 3 failed or stopped answering"),
                killed(3, 30ms, 15, true)}) == 2);
}

TEST_CASE("the first other rank a message names") {
  CHECK(first_other_rank_named("rank 2 timed out waiting to receive from rank 1; is rank 1 alive",
                               2) == 1);
  CHECK(first_other_rank_named("tcp_fault_rank: rank 0: rank 3 shut down", 0) == 3);
  CHECK(first_other_rank_named("rank 4: no peer named", 4) == -1);
  CHECK(first_other_rank_named("ranks 1, 2 and rank", 0) == -1);
  CHECK(first_other_rank_named("", 0) == -1);
}
