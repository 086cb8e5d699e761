// `ringlab run --nproc-per-node N [--nnodes K --node-rank I --master-addr A
// --master-port P] [--timeout-ms T] -- PROGRAM ARGS...`: torchrun's static
// mode. Starts the N ranks of this node with the torchrun variables set and
// waits for them (launcher/launcher.hpp). With --trace FILE the ranks record
// their transport and their traces are merged into FILE
// (backends/traced_launch.hpp).
//
// Options go before the program; the program starts after -- or at the first
// argument that is not an option (torchrun's way), and everything from there
// on is the program's own. An option ringlab run does not know is named as
// such (CLI11 alone would name the program's arguments instead).
//
// Also adds --trace FILE to `ringlab lesson`, `tour` and `bench`, whose tcp
// backend starts the ranks itself through the same launcher.
#include <stdlib.h>

#include <algorithm>
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

// Edit distance between a and b (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown option '--nproc_per_nod' (did you mean --nproc-per-node?); ..."
std::string unknown_option_message(const CLI::App& sub, const std::string& argument) {
  const std::string name = argument.substr(0, argument.find('='));
  std::string closest;
  std::size_t best = 3;  // suggest only what is at most 2 edits away
  for (const CLI::Option* option : sub.get_options())
    for (const std::string& long_name : option->get_lnames()) {
      const std::size_t distance = edit_distance(name, "--" + long_name);
      if (distance < best) best = distance, closest = "--" + long_name;
    }
  return "ringlab run: unknown option '" + name + "'" +
         (closest.empty() ? "" : " (did you mean " + closest + "?)") +
         "; its options go before the program, and everything after -- is the program's";
}

// A parse error (main prints it with "Run with --help for more information").
class UnknownOption : public CLI::ParseError {
 public:
  explicit UnknownOption(std::string message)
      : ParseError("UnknownOption", std::move(message), CLI::ExitCodes::ExtrasError) {}
};

// The first argument before the program that is not an option of ringlab run.
void refuse_unknown_options(const CLI::App& sub) {
  for (const std::string& argument : sub.remaining())
    if (argument != "--") throw UnknownOption(unknown_option_message(sub, argument));
}

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
  // From the program's name on (after -- or not), everything is the
  // program's command line, its options included. Unknown options are kept
  // (allow_extras) so that the callback can name the first one.
  sub->allow_extras();
  sub->positionals_at_end();
  sub->add_option("program", o.program, "the program each rank runs, and its arguments (after --)");
  // torchrun's spellings: --nproc-per-node and --nproc_per_node alike.
  sub->add_option("--nproc-per-node,--nproc_per_node", o.nproc_per_node, "ranks on this node");
  sub->add_option("--nnodes", o.nnodes, "number of nodes (each runs ringlab run)");
  sub->add_option("--node-rank,--node_rank", o.node_rank, "this node's index, 0 .. nnodes-1");
  sub->add_option("--master-addr,--master_addr", o.master_addr,
                  "address of node 0, where rank 0's store listens")
      ->capture_default_str();
  sub->add_option("--master-port,--master_port", o.master_port,
                  "the store's port (default: a free one; required with --nnodes > 1)");
  sub->add_option("--timeout-ms", cmd->timeout_ms,
                  "limit of every wait in the ranks (sets RINGLAB_TIMEOUT_MS)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--stop-after-ms", cmd->stop_after_ms,
                  "after a rank fails, time the others get to exit by themselves before SIGTERM")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--kill-after-ms", cmd->kill_after_ms, "time between SIGTERM and SIGKILL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--time-limit-ms", cmd->time_limit_ms,
                  "stop every rank once the job has run this long (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--tee-prefix", o.tee_prefix, "start every output line with [rank r]");
  sub->add_option("--trace", cmd->trace.output,
                  "write a Chrome trace JSON of the ranks (Perfetto, chrome://tracing): ranks "
                  "running ringlab's tcp backend record it; a lane per rank");
  sub->add_option("--trace-limit", cmd->trace.max_events,
                  "single events in the trace, shared by the ranks; the rest are aggregated")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->footer(
      "Each rank gets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
      "GROUP_RANK and GROUP_WORLD_SIZE. If a rank fails, the others are stopped and ringlab run\n"
      "exits with its status (128 + N if signal N killed it).");
  sub->callback([cmd, sub] {
    refuse_unknown_options(*sub);
    run(*cmd);
  });
}
const CommandRegistrar registrar(add_run_command);

}  // namespace

// --trace FILE on the commands whose ranks come from backends::run_ranks. It
// sets RINGLAB_TRACE, which the tcp backend reads when it starts the ranks.
void add_trace_option(CLI::App& sub) {
  const auto trace_requested = [&sub](const std::string& file) {
    const CLI::Option* backend = sub.get_option_no_throw("--backend");
    const std::string chosen =
        backend && backend->count() > 0 ? backend->as<std::string>() : backends::default_backend();
    if (chosen != "tcp")
      throw std::invalid_argument(
          "--trace records the tcp backend's ranks, but this run uses --backend " + chosen +
          ": pass --backend tcp, or drop --trace (ringlab sim --trace "
          "traces a simulated run)");
    ::setenv(backends::kTraceOutputVariable, file.c_str(), 1);
  };
  sub.add_option_function<std::string>(
      "--trace", trace_requested,
      "write a Chrome trace JSON of the run (Perfetto, chrome://tracing): a lane per rank, "
      "slices for send/recv/reduce, arrows for messages (tcp backend)");
}

}  // namespace ringlab::cli
