// `ringlab run`: torchrun for ringlab.
//
// Static (no elastic option given): `ringlab run --nproc-per-node N [--nnodes
// K --node-rank I --master-addr A --master-port P] [--timeout-ms T] --
// PROGRAM ARGS...` starts the N ranks of this node with the torchrun
// variables set and waits for them (launcher/launcher.hpp). With --trace FILE
// the ranks record their transport and their traces are merged into FILE
// (backends/traced_launch.hpp).
//
// Elastic (--nnodes MIN:MAX, --max-restarts, --rdzv-*, --standalone or
// --monitor-interval): this node's agent joins the rendezvous and restarts
// the group when a worker fails or a node joins or leaves
// (launcher/elastic_agent.hpp). With --trace FILE the agent writes its rounds
// as a Chrome trace (a lane per agent on the node hosting the store).
//
// Options go before the program; the program starts after -- or at the first
// argument that is not an option (torchrun's way), and everything from there
// on is the program's own. Every option has torchrun's spelling too
// (--nproc_per_node). An option ringlab run does not know is named as such
// (CLI11 alone would name the program's arguments instead).
//
// Also adds --trace FILE to `ringlab lesson`, `tour` and `bench`, whose tcp
// backend starts the ranks itself through the same launcher.
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "backends/traced_launch.hpp"
#include "launcher/capacity.hpp"
#include "launcher/elastic_agent.hpp"
#include "launcher/elastic_options.hpp"
#include "launcher/launcher.hpp"
#include "launcher/token_maker.hpp"
#include "tools/commands.hpp"
#include "tools/option_checks.hpp"

namespace ringlab::cli {

namespace {

struct RunCommand {
  launch::LaunchOptions options;
  backends::TracedLaunchOptions trace;
  int timeout_ms = 0;
  int stop_after_ms = 1000;
  int kill_after_ms = 3000;
  int time_limit_ms = 0;
  // torchrun's options; those that make the launch elastic are noted by
  // CLI11's count() in is_elastic().
  std::string nnodes = "1";
  int max_restarts = 0;
  std::string rdzv_id = "none";
  std::string rdzv_backend = "static";
  std::string rdzv_endpoint;
  std::string rdzv_conf;
  std::string monitor_interval = "1";
  bool standalone = false;
  std::string log_dir;
  std::string redirects = "0";
  std::string tee = "0";
  bool no_python = false;  // accepted: the program is run as it is anyway
  std::string hosts;       // horovodrun's -H localhost:N
};

// The options whose presence makes `ringlab run` elastic.
constexpr const char* kElasticOptions[] = {"--max-restarts",    "--rdzv-id",   "--rdzv-backend",
                                           "--rdzv-endpoint",   "--rdzv-conf", "--standalone",
                                           "--monitor-interval"};

bool given(const CLI::App& sub, const char* name) {
  const CLI::Option* option = sub.get_option_no_throw(name);
  return option && option->count() > 0;
}

bool is_elastic(const CLI::App& sub, const RunCommand& cmd) {
  if (cmd.nnodes.find(':') != std::string::npos) return true;
  if (given(sub, "--rdzv-backend") && cmd.rdzv_backend == "static") return false;
  return std::any_of(std::begin(kElasticOptions), std::end(kElasticOptions),
                     [&](const char* name) { return given(sub, name); });
}

// A random run id for --standalone (torchrun uses a UUID).
std::string random_run_id() {
  std::random_device random;
  std::string id;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) id += kHex[random() % 16];
  return id;
}

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

// A whole number from minimum to INT_MAX, said so when it is not (CLI11's own
// range checks print the largest double in full).
CLI::Validator whole_number(long long minimum, const std::string& unit) {
  const std::string allowed = "a whole number of " + unit + ", " + std::to_string(minimum) +
                              " or more (at most " + std::to_string(INT_MAX) + ")";
  return CLI::Validator(
      [allowed, minimum](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < minimum ||
            value > INT_MAX)
          return "'" + text + "' is not allowed: give " + allowed;
        return "";
      },
      "INT>=" + std::to_string(minimum));
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

// --log-dir, --redirects and --tee for either kind of launch: where the logs
// go (a folder in $TMPDIR when streams are redirected or teed without
// --log-dir, as torchrun does).
std::string log_dir_of(const CLI::App& sub, const RunCommand& cmd) {
  if (!cmd.log_dir.empty()) return cmd.log_dir;
  if (given(sub, "--redirects") || given(sub, "--tee"))
    return std::filesystem::temp_directory_path().string();
  return "";
}

launch::ElasticOptions elastic_options(const CLI::App& sub, RunCommand& cmd) {
  launch::ElasticOptions e;
  e.workers = cmd.options;
  const launch::NodeRange nodes = launch::parse_nnodes(cmd.nnodes);
  e.min_nodes = nodes.min;
  e.max_nodes = nodes.max;
  e.max_restarts = cmd.max_restarts;
  if (cmd.rdzv_backend != "c10d" && cmd.rdzv_backend != "static")
    throw std::invalid_argument("--rdzv-backend " + cmd.rdzv_backend +
                                ": ringlab has the c10d rendezvous only (over its own TCP store); "
                                "pass --rdzv-backend c10d");
  e.rendezvous = launch::parse_rendezvous_conf(cmd.rdzv_conf);
  e.monitor_interval = launch::parse_seconds("--monitor-interval", cmd.monitor_interval);
  if (given(sub, "--time-limit-ms"))
    throw std::invalid_argument(
        "--time-limit-ms stops a static launch; an elastic one ends when its workers do, or past "
        "--max-restarts");
  if (cmd.standalone) {
    // torchrun's --standalone: a store of its own on this machine, a fresh run id.
    if (nodes.max != 1)
      throw std::invalid_argument("--standalone runs one node, but --nnodes is " + cmd.nnodes +
                                  ": drop --nnodes, or give --rdzv-endpoint HOST:PORT instead");
    e.endpoint_host = "127.0.0.1";
    e.endpoint_reservation = std::make_shared<launch::PortReservation>(e.endpoint_host);
    e.endpoint_port = e.endpoint_reservation->port();
    e.run_id = random_run_id();
  } else if (!cmd.rdzv_endpoint.empty()) {
    const launch::Endpoint endpoint = launch::parse_endpoint(cmd.rdzv_endpoint, 29400);
    e.endpoint_host = endpoint.host;
    e.endpoint_port = endpoint.port;
    e.run_id = cmd.rdzv_id;
  } else if (nodes.max == 1) {
    // One node and no endpoint: as --standalone.
    e.endpoint_host = "127.0.0.1";
    e.endpoint_reservation = std::make_shared<launch::PortReservation>(e.endpoint_host);
    e.endpoint_port = e.endpoint_reservation->port();
    e.run_id = given(sub, "--rdzv-id") ? cmd.rdzv_id : random_run_id();
  } else {
    throw std::invalid_argument(
        "--nnodes " + cmd.nnodes +
        " needs --rdzv-endpoint HOST:PORT, an address of one of the nodes that all of them can "
        "reach (that node hosts the rendezvous store), and the same --rdzv-id on every node");
  }
  // Private by default: the agents' store and the workers take the job's secret.
  e.job_token = launch::elastic_job_token(e, std::getenv(launch::kJobTokenVariable));
  e.log_dir = log_dir_of(sub, cmd);
  e.workers.redirects = launch::parse_std_streams("--redirects", cmd.redirects);
  launch::parse_std_streams("--tee", cmd.tee);  // checked; files and console are the default
  e.trace_output = cmd.trace.output;
  const std::string& name = e.workers.name;
  if (given(sub, "--node-rank"))
    std::fprintf(stderr,
                 "%s: --node-rank is not used by the elastic rendezvous: group ranks follow "
                 "the order in which the nodes arrive\n",
                 name.c_str());
  if (given(sub, "--master-addr") || given(sub, "--master-port"))
    std::fprintf(stderr,
                 "%s: --master-addr/--master-port are not used by the elastic rendezvous: "
                 "group rank 0 picks its own address and a free port for every round\n",
                 name.c_str());
  return e;
}

// ---- horovodrun's spellings -------------------------------------------------------

bool is_this_machine(const std::string& host) {
  if (host == "localhost" || host == "127.0.0.1" || host == "::1") return true;
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 && host == name;
}

// horovodrun's -H host:slots,...: the slots of this machine (every host must
// be this one: ringlab run starts the ranks of one node).
int slots_of(const std::string& hosts) {
  int slots = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = std::min(hosts.find(',', start), hosts.size());
    const std::string item = hosts.substr(start, end - start);
    const std::size_t colon = item.rfind(':');
    const std::string host = item.substr(0, colon);
    if (!is_this_machine(host))
      throw std::invalid_argument(
          "-H " + hosts + ": '" + host + "' is not this machine; ringlab run starts the ranks of "
          "this node only, so give -H localhost:N (or --nproc-per-node N), and start ringlab run "
          "on each machine of a job of several (--nnodes, --node-rank, --master-addr; "
          "docs/elastic.md for an elastic job)");
    int count = 1;  // horovodrun's: a host without slots has one
    if (colon != std::string::npos) {
      const std::string text = item.substr(colon + 1);
      const auto [at, error] = std::from_chars(text.data(), text.data() + text.size(), count);
      if (error != std::errc() || at != text.data() + text.size() || count < 1 || count > 1 << 20)
        throw std::invalid_argument("-H " + hosts + ": '" + text +
                                    "' is not a number of slots; write HOST:SLOTS, e.g. "
                                    "-H localhost:4");
    }
    slots += count;
    if (end == hosts.size()) return slots;
    start = end + 1;
  }
}

// -H localhost:N gives N ranks; with -np, -np of them (horovodrun's rule:
// no more than the slots).
void apply_hosts(const CLI::App& sub, RunCommand& cmd) {
  const int slots = slots_of(cmd.hosts);
  int& ranks = cmd.options.nproc_per_node;
  if (!given(sub, "--nproc-per-node")) {
    ranks = slots;
    return;
  }
  if (ranks > slots)
    throw std::invalid_argument("-np " + std::to_string(ranks) + " asks for more ranks than the " +
                                std::to_string(slots) + " slot(s) of -H " + cmd.hosts +
                                ": give -H localhost:" + std::to_string(ranks) +
                                ", or a smaller -np");
}

void run_static(const CLI::App& sub, RunCommand& cmd) {
  auto& o = cmd.options;
  const launch::NodeRange nodes = launch::parse_nnodes(cmd.nnodes);
  o.nnodes = nodes.min;
  o.deadline = launch::Milliseconds(cmd.time_limit_ms);
  o.redirects = launch::parse_std_streams("--redirects", cmd.redirects);
  launch::parse_std_streams("--tee", cmd.tee);
  if (const std::string log_dir = log_dir_of(sub, cmd); !log_dir.empty()) {
    // Before making a folder for nothing (each rank's log files count).
    launch::check_rank_capacity(o.nproc_per_node, true);
    launch::validate(o);
    const std::string root = launch::make_log_root(log_dir, o.run_id);
    o.log_folder = o.error_file_folder = root + "/attempt_0";
    std::fprintf(stderr, "%s: the ranks' output goes to %s/<local rank>/{stdout,stderr}.log\n",
                 o.name.c_str(), o.log_folder.c_str());
  }
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
    if (traced.failed && result.exit_code == 0) throw ExitStatus{1};
  }
  if (result.exit_code == 0) return;
  std::fprintf(stderr, "%s: %s\n", o.name.c_str(), result.message.c_str());
  std::fflush(stderr);
  // The exit status says what happened to the job, as a shell would.
  throw ExitStatus{result.exit_code};
}

void run(const CLI::App& sub, RunCommand& cmd) {
  auto& o = cmd.options;
  o.rank_timeout = launch::Milliseconds(cmd.timeout_ms);
  o.stop_after = launch::Milliseconds(cmd.stop_after_ms);
  o.kill_after = launch::Milliseconds(cmd.kill_after_ms);
  if (given(sub, "--hosts")) apply_hosts(sub, cmd);
  if (!is_elastic(sub, cmd)) return run_static(sub, cmd);
  const int status = launch::run_elastic(elastic_options(sub, cmd));
  std::fflush(stdout);
  std::fflush(stderr);
  if (status != 0) throw ExitStatus{status};
}

// Where the ranks run: torchrun's static options, and horovodrun's -H.
void add_placement_options(CLI::App* sub, RunCommand& cmd) {
  auto& o = cmd.options;
  sub->add_option("program", o.program, "the program each rank runs, and its arguments (after --)");
  // torchrun's spellings: --nproc-per-node and --nproc_per_node alike;
  // horovodrun's -np is rewritten to it (spell_horovod_options).
  sub->add_option("--nproc-per-node,--nproc_per_node", o.nproc_per_node,
                  "ranks on this node (horovodrun's -np N is the same)");
  sub->add_option("-H,--hosts", cmd.hosts,
                  "horovodrun's host list: localhost:N runs N ranks here (with -np, at most N)");
  sub->add_option("--nnodes", cmd.nnodes,
                  "number of nodes (each runs ringlab run), or MIN:MAX for an elastic job")
      ->capture_default_str();
  sub->add_option("--node-rank,--node_rank", o.node_rank,
                  "this node's index, 0 .. nnodes-1 (static launch)");
  sub->add_option("--master-addr,--master_addr", o.master_addr,
                  "address of node 0, where rank 0's store listens (static launch)")
      ->capture_default_str();
  sub->add_option("--master-port,--master_port", o.master_port,
                  "the store's port (static launch; default: a free one; required with --nnodes > "
                  "1)");
}

// The elastic launch (torchrun's options).
void add_elastic_options(CLI::App* sub, RunCommand& cmd) {
  sub->add_option("--max-restarts,--max_restarts", cmd.max_restarts,
                  "restarts of the worker group before the job fails (any restart counts: a "
                  "failure, a node joining or leaving)")
      ->check(whole_number(0, "restarts"));
  sub->add_option("--rdzv-id,--rdzv_id", cmd.rdzv_id, "the job's id, the same on every node")
      ->capture_default_str();
  sub->add_option("--rdzv-backend,--rdzv_backend", cmd.rdzv_backend,
                  "c10d (the elastic rendezvous over ringlab's TCP store) or static");
  sub->add_option("--rdzv-endpoint,--rdzv_endpoint", cmd.rdzv_endpoint,
                  "HOST:PORT of the rendezvous store; the node that can bind it hosts it");
  sub->add_option("--rdzv-conf,--rdzv_conf", cmd.rdzv_conf,
                  "join_timeout=600,last_call_timeout=30,close_timeout=30,read_timeout=60,"
                  "keep_alive_interval=5,keep_alive_max_attempt=3 (seconds), is_host=true|false, "
                  "token_file=PATH (the job's secret; or RINGLAB_JOB_TOKEN), open=true (no secret)");
  sub->add_option("--monitor-interval,--monitor_interval", cmd.monitor_interval,
                  "seconds between two looks at the workers and the other nodes (elastic)")
      ->capture_default_str();
  sub->add_flag("--standalone", cmd.standalone,
                "one node with a rendezvous store of its own (a free port, a fresh run id)");
}

// What the ranks print and how long they get.
void add_output_options(CLI::App* sub, RunCommand& cmd) {
  sub->add_option("--log-dir,--log_dir", cmd.log_dir,
                  "write every rank's stdout and stderr to "
                  "DIR/<run id>_XXXXXX/attempt_<restart>/<local rank>/{stdout,stderr}.log");
  sub->add_option("-r,--redirects", cmd.redirects,
                  "streams that go to the log files only: 1 stdout, 2 stderr, 3 both, or per local "
                  "rank 0:1,1:2 (a log folder in $TMPDIR without --log-dir)");
  sub->add_option("-t,--tee", cmd.tee,
                  "streams that go to the log files and the console (the default for all with a "
                  "log folder; same form as --redirects)");
  sub->add_flag("--no-python,--no_python", cmd.no_python,
                "accepted for torchrun's sake: the program is run as it is");
  sub->add_option("--timeout-ms", cmd.timeout_ms,
                  "limit of every wait in the ranks (sets RINGLAB_TIMEOUT_MS)")
      ->check(whole_number(0, "milliseconds"));
  sub->add_option("--stop-after-ms", cmd.stop_after_ms,
                  "after a rank fails, time the others get to exit by themselves before SIGTERM")
      ->check(whole_number(0, "milliseconds"))
      ->capture_default_str();
  sub->add_option("--kill-after-ms", cmd.kill_after_ms, "time between SIGTERM and SIGKILL")
      ->check(whole_number(0, "milliseconds"))
      ->capture_default_str();
  sub->add_option("--time-limit-ms", cmd.time_limit_ms,
                  "stop every rank once the job has run this long (0: no limit)")
      ->check(whole_number(0, "milliseconds"));
  sub->add_flag("--tee-prefix", cmd.options.tee_prefix, "start every output line with [rank r]");
  sub->add_option("--trace", cmd.trace.output,
                  "write a Chrome trace JSON (Perfetto, chrome://tracing): static, of the ranks "
                  "running ringlab's tcp backend (a lane per rank); elastic, of the agents' rounds "
                  "(a lane per agent)")
      ->check(file_to_write("trace file"));
  sub->add_option("--trace-limit", cmd.trace.max_events,
                  "single events in the trace, shared by the ranks; the rest are aggregated")
      ->check(whole_number(1, "events"))
      ->capture_default_str();
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto cmd = std::make_shared<RunCommand>();
  CLI::App* sub = app.add_subcommand(
      "run", "start the ranks of this node as processes (like torchrun): run -- PROGRAM ARGS...");
  // From the program's name on (after -- or not), everything is the
  // program's command line, its options included. Unknown options are kept
  // (allow_extras) so that the callback can name the first one.
  sub->allow_extras();
  sub->positionals_at_end();
  add_placement_options(sub, *cmd);
  add_elastic_options(sub, *cmd);
  add_output_options(sub, *cmd);
  sub->footer(
      "Each rank gets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
      "GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_NAME, ROLE_WORLD_SIZE,\n"
      "TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID and\n"
      "TORCHELASTIC_ERROR_FILE. If a rank fails, the others are stopped and ringlab run exits\n"
      "with its status (128 + N if signal N killed it); an elastic job restarts the group first.\n"
      "Every option has torchrun's spelling too (--nproc_per_node), and horovodrun's -np N and\n"
      "-H localhost:N work as well. docs/elastic.md shows an elastic job on two nodes.");
  sub->callback([cmd, sub] {
    refuse_unknown_options(*sub);
    run(*sub, *cmd);
  });
}

void spell_horovod_options(const CLI::App& app, std::vector<std::string>& args) {
  if (args.size() < 3 || args[1] != "run") return;
  const CLI::App* run = app.get_subcommand("run");
  for (std::size_t i = 2; i < args.size();) {
    std::string& arg = args[i];
    if (arg.empty() || arg[0] != '-' || arg == "--") return;  // the program's own from here
    if (arg == "-np") arg = "--nproc-per-node";
    if (arg.rfind("-np=", 0) == 0) arg = "--nproc-per-node=" + arg.substr(4);
    // "--name=value" and "-r3" carry their value; "--name value" and "-r 3" do not.
    const bool attached = arg.find('=') != std::string::npos || (arg[1] != '-' && arg.size() > 2);
    const CLI::Option* option = attached ? nullptr : run->get_option_no_throw(arg);
    i += option && option->get_expected_max() > 0 ? 2 : 1;
  }
}

// --trace FILE on the commands whose ranks come from backends::run_ranks: the
// session the command hands to run_ranks.
void add_trace_option(CLI::App& sub, std::optional<backends::TraceSession>& session) {
  const auto trace_requested = [&sub, &session](const std::string& file) {
    const CLI::Option* backend = sub.get_option_no_throw("--backend");
    const std::string chosen =
        backend && backend->count() > 0 ? backend->as<std::string>() : backends::default_backend();
    if (chosen == "nccl")
      throw std::invalid_argument(
          "--trace records the ranks of the tcp, inproc and nccl_rules backends, but this run "
          "uses --backend nccl: pass one of those, or drop --trace (ringlab sim --trace "
          "traces a simulated run)");
    session.emplace(file);
  };
  sub.add_option_function<std::string>(
      "--trace", trace_requested,
      "write a Chrome trace JSON of the run (Perfetto, chrome://tracing): a lane per rank, "
      "slices for send/recv/reduce, arrows for messages, and every collective for `ringlab "
      "replay` (tcp, inproc and nccl_rules backends)")
      ->check(file_to_write("trace file"));
}

}  // namespace ringlab::cli
