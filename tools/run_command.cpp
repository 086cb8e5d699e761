// `ringlab run --nproc-per-node N [--nnodes K --node-rank I --master-addr A
// --master-port P] [--timeout-ms T] -- PROGRAM ARGS...`: torchrun's static
// mode. Starts the N ranks of this node with the torchrun variables set and
// waits for them (launcher/launcher.hpp). With --trace FILE the ranks record
// their transport and their traces are merged into FILE
// (backends/traced_launch.hpp).
//
// Also adds --trace FILE to `ringlab lesson`, `tour` and `bench`, whose tcp
// backend starts the ranks itself through the same launcher.
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "backends/traced_launch.hpp"
#include "launcher/launcher.hpp"
#include "tools/commands.hpp"

namespace ringlab::cli {

namespace {

struct RunCommand {
  launch::LaunchOptions options;
  backends::TraceOptions trace;
  int timeout_ms = 0;
  int stop_after_ms = 1000;
  int kill_after_ms = 3000;
  int time_limit_ms = 0;
};

void run(RunCommand& cmd) {
  auto& o = cmd.options;
  o.rank_timeout = launch::Milliseconds(cmd.timeout_ms);
  o.stop_after = launch::Milliseconds(cmd.stop_after_ms);
  o.kill_after = launch::Milliseconds(cmd.kill_after_ms);
  o.deadline = launch::Milliseconds(cmd.time_limit_ms);
  launch::LaunchResult result;
  if (cmd.trace.output.empty()) {
    result = launch::launch(o);
    std::fflush(stdout);
  } else {
    backends::TraceResult traced;
    result = backends::launch_traced(o, cmd.trace, traced);
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", o.name.c_str(), traced.message.c_str());
    std::fflush(stderr);
  }
  if (result.exit_code == 0) return;
  std::fprintf(stderr, "%s: %s\n", o.name.c_str(), result.message.c_str());
  std::fflush(stderr);
  // The exit status says what happened to the job, as a shell would.
  std::exit(result.exit_code);
}

void add_run_command(CLI::App& app) {
  auto cmd = std::make_shared<RunCommand>();
  CLI::App* sub = app.add_subcommand(
      "run", "start the ranks of this node as processes (like torchrun): run -- PROGRAM ARGS...");
  auto& o = cmd->options;
  // After --, everything is the program's command line, its options included.
  sub->add_option("program", o.program, "the program each rank runs, and its arguments (after --)");
  sub->add_option("--nproc-per-node", o.nproc_per_node, "ranks on this node");
  sub->add_option("--nnodes", o.nnodes, "number of nodes (each runs ringlab run)");
  sub->add_option("--node-rank", o.node_rank, "this node's index, 0 .. nnodes-1");
  sub->add_option("--master-addr", o.master_addr, "address of node 0, where rank 0's store listens")
      ->capture_default_str();
  sub->add_option("--master-port", o.master_port,
                  "the store's port (default: a free one; required with --nnodes > 1)");
  sub->add_option("--timeout-ms", cmd->timeout_ms,
                  "limit of every wait in the ranks (sets RINGLAB_TIMEOUT_MS)")
      ->check(whole_number(0, kMaxInt, "a number of milliseconds"));
  sub->add_option("--stop-after-ms", cmd->stop_after_ms,
                  "after a rank fails, time the others get to exit by themselves before SIGTERM")
      ->check(whole_number(0, kMaxInt, "a number of milliseconds"))
      ->capture_default_str();
  sub->add_option("--kill-after-ms", cmd->kill_after_ms, "time between SIGTERM and SIGKILL")
      ->check(whole_number(0, kMaxInt, "a number of milliseconds"))
      ->capture_default_str();
  sub->add_option("--time-limit-ms", cmd->time_limit_ms,
                  "stop every rank once the job has run this long (0: no limit)")
      ->check(whole_number(0, kMaxInt, "a number of milliseconds"));
  sub->add_flag("--tee-prefix", o.tee_prefix, "start every output line with [rank r]");
  sub->add_option("--trace", cmd->trace.output,
                  "write a Chrome trace JSON of the ranks (Perfetto, chrome://tracing): ranks "
                  "running ringlab's tcp backend record it; a lane per rank");
  sub->add_option("--trace-limit", cmd->trace.max_events,
                  "single events in the trace, shared by the ranks; the rest are aggregated")
      ->check(whole_number(1, kMaxInt, "a number of events"))
      ->capture_default_str();
  sub->footer(
      "Each rank gets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
      "GROUP_RANK and GROUP_WORLD_SIZE. If a rank fails, the others are stopped and ringlab run\n"
      "exits with its status (128 + N if signal N killed it).");
  sub->callback([cmd] { run(*cmd); });
}
const CommandRegistrar registrar(add_run_command);


}  // namespace

// --trace FILE on the commands whose ranks come from backends::run_ranks. It
// sets RINGLAB_TRACE, which the tcp backend reads when it starts the ranks.
void add_trace_option(CLI::App& sub) {
  const auto trace_requested = [&sub](const std::string& file) {
    const CLI::Option* backend = sub.get_option_no_throw("--backend");
    const std::string chosen = backend && backend->count() > 0 ? backend->as<std::string>()
                                                               : backends::default_backend();
    if (chosen != "tcp")
      throw std::invalid_argument("--trace records the tcp backend's ranks, but this run uses "
                                  "--backend " + chosen + ": pass --backend tcp, or drop --trace "
                                  "(ringlab sim --trace traces a simulated run)");
    ::setenv(backends::kTraceOutputVariable, file.c_str(), 1);
  };
  sub.add_option_function<std::string>(
      "--trace", trace_requested,
      "write a Chrome trace JSON of the run (Perfetto, chrome://tracing): a lane per rank, "
      "slices for send/recv/reduce, arrows for messages (tcp backend)");
}

}  // namespace ringlab::cli
