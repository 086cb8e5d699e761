// nccl-tests-style benchmark of one collective on every rank of a group.
//
// Each size: `warmup` untimed runs, a barrier, `iters` timed runs; the time is
// the slowest rank's average. Then one checked run on inputs with a closed
// form, whose wrong elements are counted over all ranks (#wrong). Bandwidths
// follow nccl-tests: algbw = size / time, busbw = algbw * the bus factor of
// the collective's row (primitives/collectives.hpp: 2(n-1)/n for all_reduce;
// (n-1)/n for all_gather, reduce_scatter, all_to_all, gather, scatter; 1 for
// broadcast and reduce) or 1 for sendrecv. Where no algorithm is named the
// process group's default runs (all_reduce: auto). Before the first size its
// operation also runs untimed for `first_warm_up` (unless warmup is 0), so
// that the first row does not carry the first moments after the ranks
// connect, which were seen to be slower (docs/benchmarks.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "primitives/process_group.hpp"

namespace ringlab::bench {

struct BenchOptions {
  std::string op = "all_reduce";  // a collective name, or "sendrecv"
  std::string algorithm;          // "" = the default
  std::size_t min_bytes = 4 << 10;
  std::size_t max_bytes = 64 << 20;
  DType dtype = DType::Float32;
  ReduceOp redop = ReduceOp::SUM;
  int root = 0;
  int warmup = 3;
  int iters = 10;
  // At least this long, in batches of `warmup` runs, every rank the same
  // number of them (the slowest rank's clock decides).
  Duration first_warm_up{100};
};

// The largest size the benchmark takes (1 TiB): more than any machine it
// runs on has, and far from where doubling the size could overflow.
inline constexpr std::size_t kMaxBenchBytes = std::size_t{1} << 40;

// "4K" -> 4096, "64M" -> 67108864, "1G", "1.5K" -> 1536; plain numbers are
// bytes. Anything else (0, a sign, an exponent, inf, nan, a fraction of a
// byte, more than kMaxBenchBytes) throws std::invalid_argument naming the
// accepted form.
std::size_t parse_size(const std::string& text);
// "4K:64M" -> {4096, 67108864}; "1M" -> {1M, 1M}. MIN must not exceed MAX.
std::pair<std::size_t, std::size_t> parse_size_range(const std::string& text);
// Throws std::invalid_argument when o's sizes give no row at all: every size
// smaller than one element of o.dtype, or a range parse_size_range refuses.
void check_sizes(const BenchOptions& o);

// ---- memory -----------------------------------------------------------------

// The host memory one rank needs for the largest size of o on `world` ranks
// (the root of a rooted op, which needs the most): its tensors (the buffer,
// and the lists where the op takes them) and as much again for the scratch
// of the collective (the packed list, or one buffer for the algorithm).
std::size_t memory_per_rank(const BenchOptions& o, int world);

// What this process may still allocate, each where it can be read and is
// not unlimited.
struct MemoryLimits {
  std::optional<std::size_t> available;  // MemAvailable in /proc/meminfo
  // The cgroup's memory limit less what the cgroup uses (less its
  // reclaimable file cache); cgroup_file names the limit's file.
  std::optional<std::size_t> cgroup_left;
  std::string cgroup_file;
  // RLIMIT_AS (ulimit -v) less this process's address space now.
  std::optional<std::size_t> address_space_left;
};
MemoryLimits read_memory_limits();

// How the ranks share memory: ranks_per_process in one address space (all
// of them for threads, 1 for processes), ranks_here on this machine.
struct RankPlacement {
  int world = 1;
  int ranks_per_process = 1;
  int ranks_here = 1;
};

// Throws std::runtime_error when the largest size of o cannot fit in what
// `limits` leave: the message says how much it needs, which limit it
// exceeds, and the largest --sizes maximum that fits.
void check_memory(const BenchOptions& o, const RankPlacement& placement,
                  const MemoryLimits& limits);

// The ops it runs: every collective that moves data, in the table's order,
// then "sendrecv".
std::vector<std::string> benchmark_ops();
// "a, b, c or d", for messages and --help: benchmark_ops() and "loopback"
// (the machine's ceiling, bench/loopback.hpp).
std::string benchmark_ops_text();
// The collective an op names, or nullptr for "sendrecv" (a ring exchange of
// point-to-point messages). Throws std::invalid_argument listing the ops for
// anything else, barrier included (it moves no data).
const CollectiveInfo* benchmark_op(const std::string& op);

// The legend printed under the header: what algbw, busbw's factor and the
// root column mean for this op at this world size (nccl-tests' definitions).
// `collective` is benchmark_op(op).
std::string legend(const std::string& op, const CollectiveInfo* collective, int ranks);

struct Row {
  std::size_t bytes;
  std::size_t count;
  double time_us;
  double algbw_gbs;
  double busbw_gbs;
  std::int64_t wrong;
};

// Runs on every rank; rank 0 prints the header and a row per size (sizes
// double from min to max) and every rank returns the rows.
std::vector<Row> run(ProcessGroup& pg, const BenchOptions& options, bool print = true);

}  // namespace ringlab::bench
