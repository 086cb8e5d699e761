// `ringlab bench --op OP [--algorithm A] [--backend B] -n RANKS --sizes 4K:64M`
#include <memory>
#include <string>

#include "bench/bench.hpp"
#include "backends/backends.hpp"
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
};
}  // namespace

namespace {
void add_bench_command(CLI::App& app) {
  auto cmd = std::make_shared<BenchCommand>();
  CLI::App* sub = app.add_subcommand("bench", "time a collective, nccl-tests style");
  sub->add_option("--op", cmd->options.op, bench::benchmark_ops_text());
  sub->add_option("--algorithm", cmd->options.algorithm,
                  "algorithm name (default: the process group's; all_reduce: auto)");
  sub->add_option("--backend", cmd->backend, "where the ranks run: " + backends::backends_help())
      ->check(CLI::IsMember(backends::backend_names()));
  sub->add_option("-n,--ranks", cmd->ranks, "number of ranks")->check(CLI::Range(1, 1024));
  sub->add_option("--sizes", cmd->sizes, "MIN:MAX bytes, doubling (e.g. 4K:64M)");
  sub->add_option("--dtype", cmd->dtype, "float32, float64, int32, int64");
  sub->add_option("--redop", cmd->redop, "sum, avg, min, max");
  sub->add_option("--root", cmd->options.root, "root of rooted ops");
  sub->add_option("--warmup", cmd->options.warmup, "untimed runs per size")->check(CLI::NonNegativeNumber);
  sub->add_option("--iters", cmd->options.iters, "timed runs per size")->check(CLI::PositiveNumber);
  sub->add_option("--timeout-ms", cmd->timeout_ms, "limit of every wait")->check(CLI::PositiveNumber);
  add_trace_option(*sub);
  sub->callback([cmd] {
    auto& o = cmd->options;
    std::tie(o.min_bytes, o.max_bytes) = bench::parse_size_range(cmd->sizes);
    o.dtype = parse_dtype(cmd->dtype);
    o.redop = parse_op(cmd->redop);
    bench::benchmark_op(o.op);  // rejects unknown ops before starting ranks
    ProcessGroupOptions group;
    group.timeout = Duration(cmd->timeout_ms);
    group.check_arguments = false;  // time the collective, not the argument exchange
    backends::run_ranks(cmd->backend, cmd->ranks,
                       [&](ProcessGroup& pg) { bench::run(pg, o); }, group);
  });
}
const CommandRegistrar registrar(add_bench_command);
}  // namespace

}  // namespace ringlab::cli
