// `ringlab bench --op OP [--algorithm A] [--backend B] -n RANKS --sizes 4K:64M`, and
// `ringlab bench --op loopback -n CONNECTIONS --sizes 4K:64M` (the machine's ceiling).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "backends/rank_world.hpp"
#include "bench/bench.hpp"
#include "bench/loopback.hpp"
#ifdef RINGLAB_BENCH_NATIVE
#include "bench/native.hpp"
#endif
#include "tools/commands.hpp"

namespace ringlab::cli {

namespace {
struct BenchCommand {
  bench::BenchOptions options;
  std::string backend = backends::default_backend();
  int ranks = 4;
  std::string sizes = "4K:64M";
  std::string dtype = "float32";
  std::string redop = "sum";
  int timeout_ms = 60000;
  std::optional<backends::TraceSession> trace;  // --trace FILE
  bool native = false;
};

// What the ranks would each find wrong after printing the header, found
// before any of them starts: a root outside the world or for an op without
// one, an algorithm the op's table lacks, a reduce op the check cannot judge
// or the dtype cannot take, sendrecv alone. `row`: the op's collective
// (nullptr: sendrecv); unknown ops were refused by bench::benchmark_op.
std::string names_where(bool (*wanted)(const CollectiveInfo&)) {
  std::string names;
  for (const CollectiveInfo& c : collective_table())
    if (wanted(c)) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

void check_before_start(const BenchCommand& cmd, const CollectiveInfo* row, bool root_given,
                        bool redop_given) {
  const bench::BenchOptions& o = cmd.options;
  const bool rooted = row && row->rooted;
  const bool reduces = row && row->reduces;
  const std::string world = std::to_string(cmd.ranks);
  if (root_given && !rooted)
    throw std::invalid_argument("--root: " + o.op +
                                " has no root rank: leave --root out (it is for " +
                                names_where([](const CollectiveInfo& c) { return c.rooted; }) +
                                ")");
  if (rooted && (o.root < 0 || o.root >= cmd.ranks))
    throw std::invalid_argument("--root " + std::to_string(o.root) +
                                " is not a rank of a world of " + world + " ranks (0 to " +
                                std::to_string(cmd.ranks - 1) + "): pass a --root below " + world +
                                ", or -n " + std::to_string(o.root + 1) + " or more");
  if (o.op == "sendrecv" && cmd.ranks < 2)
    throw std::invalid_argument("sendrecv passes messages between ranks: use -n 2 or more");
  if (!o.algorithm.empty() && o.algorithm != "default") {
    if (o.op == "sendrecv")
      throw std::invalid_argument(
          "--algorithm " + o.algorithm +
          ": sendrecv is one send and one receive per rank and has no algorithm: leave it out");
    const std::vector<std::string> names = algorithm_names(row->id);
    if (std::find(names.begin(), names.end(), o.algorithm) == names.end()) {
      std::string valid;
      for (const std::string& name : names) valid += (valid.empty() ? "" : ", ") + name;
      throw std::invalid_argument("--algorithm " + o.algorithm + ": " + o.op +
                                  " has no such algorithm: use one of " + valid);
    }
  }
  if (redop_given && !reduces)
    throw std::invalid_argument("--redop: " + o.op +
                                " does not reduce: leave --redop out (it is for " +
                                names_where([](const CollectiveInfo& c) { return c.reduces; }) +
                                ")");
  if (reduces) {
    const ReduceOp op = o.redop;
    if (op != ReduceOp::SUM && op != ReduceOp::AVG && op != ReduceOp::MIN && op != ReduceOp::MAX)
      throw std::invalid_argument("--redop " + cmd.redop +
                                  ": the benchmark checks its results for sum, avg, min and max "
                                  "only: use one of those");
    check_op(op, o.dtype);  // avg on an integer dtype
  }
}

// Where the ranks' memory comes from. The tcp backend's ranks are processes
// on this machine, started by this one; a process that is one of them
// already (started by a launcher, which set its rank) counts only itself.
bench::RankPlacement placement(const std::string& backend, int ranks) {
  if (backend != "tcp") return {ranks, ranks, ranks};  // threads of this process
  return {ranks, 1, backends::is_launched_rank() ? 1 : ranks};
}

// --native: NcclGroup's rows next to NcclTransport's (bench/native.hpp).
void run_native(const BenchCommand& cmd) {
  if (cmd.backend != "nccl")
    throw std::invalid_argument("--native compares NCCL's own collective with the hand-written "
                                "one on GPU memory: it needs --backend nccl, not " + cmd.backend);
#ifdef RINGLAB_BENCH_NATIVE
  bench::run_native(cmd.options, cmd.ranks, Duration(cmd.timeout_ms));
#else
  throw std::invalid_argument("--native needs the NCCL backend, which this build does not have "
                              "(docs/gpu.md says how to build it)");
#endif
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto cmd = std::make_shared<BenchCommand>();
  CLI::App* sub = app.add_subcommand("bench", "time a collective, nccl-tests style");
  sub->add_option("--op", cmd->options.op, bench::benchmark_ops_text());
  sub->add_option("--algorithm", cmd->options.algorithm,
                  "algorithm name (default: the process group's; all_reduce: auto)");
  sub->add_option("--backend", cmd->backend, "where the ranks run: " + backends::backends_help())
      ->check(CLI::IsMember(backends::backend_names()));
  sub->add_option("-n,--ranks", cmd->ranks,
                  "number of ranks (default 4, or the world of the job that started this "
                  "process; loopback: of connections)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--sizes", cmd->sizes, "MIN:MAX bytes, doubling (e.g. 4K:64M)");
  sub->add_option("--dtype", cmd->dtype, "element type: " + dtype_choices());
  sub->add_option("--redop", cmd->redop, "sum, avg, min, max");
  sub->add_option("--root", cmd->options.root, "root of rooted ops");
  sub->add_option("--warmup", cmd->options.warmup, "untimed runs per size")
      ->check(whole_number(0, kMaxInt, "a number of untimed runs"));
  sub->add_option("--iters", cmd->options.iters, "timed runs per size")
      ->check(whole_number(1, kMaxInt, "a number of timed runs"));
  sub->add_option("--timeout-ms", cmd->timeout_ms, "limit of every wait")
      ->check(whole_number(1, kMaxInt, "a number of milliseconds"));
  sub->add_flag("--native", cmd->native,
                "with --backend nccl: NCCL's own collective next to the hand-written algorithm, "
                "both on GPU memory, a row each per size");
  add_trace_option(*sub, cmd->trace);
  sub->callback([cmd, sub] {
    auto& o = cmd->options;
    // Started as a rank of a job (ringlab run, torchrun): the job's world.
    if (sub->count("--ranks") == 0 && backends::launched_world_size() > 0)
      cmd->ranks = backends::launched_world_size();
    std::tie(o.min_bytes, o.max_bytes) = bench::parse_size_range(cmd->sizes);
    if (o.op == "loopback") {  // no ranks: -n plain connections (bench/loopback.hpp)
      bench::check_sizes(o);
      bench::run_loopback(o, cmd->ranks);
      return;
    }
    o.dtype = parse_dtype(cmd->dtype);
    o.redop = parse_op(cmd->redop);
    const CollectiveInfo* row = bench::benchmark_op(o.op);  // rejects unknown ops
    bench::check_sizes(o);
    check_before_start(*cmd, row, sub->count("--root") > 0, sub->count("--redop") > 0);
    if (cmd->native) {
      run_native(*cmd);
      return;
    }
    bench::check_memory(o, placement(cmd->backend, cmd->ranks), bench::read_memory_limits());
    ProcessGroupOptions group;
    group.timeout = Duration(cmd->timeout_ms);
    group.check_arguments = false;  // time the collective, not the argument exchange
    backends::run_ranks(
        cmd->backend, cmd->ranks, [&](ProcessGroup& pg) { bench::run(pg, o); }, group,
        cmd->trace ? &*cmd->trace : nullptr);
  });
}

}  // namespace ringlab::cli
