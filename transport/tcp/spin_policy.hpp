// Whether a wait of the TCP engine spins before it blocks.
//
// A wait for a message of at most kSpinBytes spins before it blocks: for up
// to kSpin it looks at the sockets without blocking and yields the processor
// between looks; only then does it block in poll(). A rank blocked in poll()
// has to be woken and scheduled again when its message comes, which can cost
// as much as a small message's whole trip where ranks share processors.
// Measurements: docs/benchmarks.md, "Measurements behind the code".
// Spinning keeps the rank on its processor, and the yield lets the other
// ranks that share it run (the sender may be one of them when there are more
// ranks than processors). Open MPI's ranks do the same when oversubscribed
// (mpi_yield_when_idle), for the whole wait; here a wait that lasts (a slow
// peer) soon stops taking processor time that other programs could use, and
// a wait for a large message, whose transfer takes far longer than a
// wake-up, does not spin at all. And when other programs keep the processors
// busy, a yield can hand one of them a whole time slice, while a rank blocked
// in poll() would have been let back in as soon as its message came: so
// after a yield that took kSlowYield or more, waits do not spin for
// kSpinPause.
#pragma once

#include <chrono>
#include <cstddef>

namespace ringlab::tcp {

struct SpinPolicy {
  using Clock = std::chrono::steady_clock;

  static constexpr auto kSpin = std::chrono::microseconds(200);
  static constexpr std::size_t kSpinBytes = 64 * 1024;
  static constexpr auto kSlowYield = std::chrono::microseconds(1000);
  static constexpr auto kSpinPause = std::chrono::milliseconds(100);
  // A spinning receive looks at its own peer's socket alone (one recv() that
  // may find nothing, where poll() and then recv() are two system calls), and
  // at every socket (poll(): other peers, writes, the wake-up) on every
  // kFullLookEvery-th look. Where ranks outnumber processors each system call
  // is processor time the others wait for.
  static constexpr unsigned kFullLookEvery = 8;

  // A wait for a message of at most `largest_bytes` spins for its first
  // `spin`, unless a yield took `slow_yield` or more in the last `pause`.
  Clock::duration spin = kSpin;
  std::size_t largest_bytes = kSpinBytes;
  Clock::duration slow_yield = kSlowYield;
  Clock::duration pause = kSpinPause;
  Clock::time_point paused_until{};

  bool spins(std::size_t bytes, Clock::time_point wait_started, Clock::time_point now) const {
    return bytes <= largest_bytes && now - wait_started < spin && now >= paused_until;
  }
  // A yield ran from `from` to `back`.
  void yielded(Clock::time_point from, Clock::time_point back) {
    if (back - from >= slow_yield) paused_until = back + pause;
  }
};

}  // namespace ringlab::tcp
