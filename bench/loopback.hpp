// The loopback ceiling: what `pairs` plain TCP connections over 127.0.0.1
// carry on this machine at once, each a sender thread that writes in 1 MiB
// writes and a receiver thread that reads in 1 MiB reads, with nothing else
// (no framing, no matching, no reduction). `ringlab bench --op loopback -n N`
// prints it in the benchmark's rows, so that a figure of the TCP backend
// comes with the ceiling of the same machine in the same run.
//
// Each size: `warmup` untimed runs, then `iters` timed runs, each run every
// connection moving `size` bytes, all started together (a barrier); a run's
// time is when the last receiver has everything. The row's time is the
// average; algbw = size / time (what one connection carries), busbw = pairs
// * size / time (all of them together). One more run is checked: every
// receiver must have the bytes its sender wrote (#wrong counts those that
// differ).
#pragma once

#include <vector>

#include "bench/bench.hpp"

namespace ringlab::bench {

inline constexpr std::size_t kLoopbackWriteBytes = std::size_t{1} << 20;

// o.op is "loopback"; o's dtype, redop, root and algorithm are not used.
// Throws std::runtime_error naming the system call that failed.
std::vector<Row> run_loopback(const BenchOptions& o, int pairs, bool print = true);

}  // namespace ringlab::bench
