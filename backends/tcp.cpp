// The `tcp` backend: every rank is a process, talking to the others over TCP
// (transport/tcp). The default backend of lessons and `ringlab bench`, and
// init_process_group("tcp") for a program started by a launcher.
//
// Two ways a process gets here:
//  - It already is a rank: `ringlab run` (or torchrun, Slurm, Open MPI) set
//    RANK and WORLD_SIZE (or their own variables). It connects to the other
//    ranks (tcp::from_environment + tcp::connect, once per process) and runs
//    the body on this one rank.
//  - It is not: like torch.multiprocessing.spawn, it starts `world` copies of
//    its own executable with the same arguments through the launcher, which
//    sets the rank variables, and waits for them. A failed rank fails the run.
//
// A program may run several worlds one after another (`ringlab tour`): the
// copies started for the k-th world get RINGLAB_RUN_CALL=k, skip the worlds
// before it with their output silenced (the parent prints that part), run
// world k and exit.
//
// Traces: under a traced launch (RINGLAB_TRACE_DIR set, traced_launch.hpp)
// the rank wraps its connection in a sim::RecordingTransport with wall-clock
// times and, after each world (also one that failed), writes everything it
// recorded so far to RINGLAB_TRACE_DIR/rank<r>.json; the launcher merges the
// files. When it starts the ranks itself, RINGLAB_TRACE (set by --trace)
// names the merged file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/rows.hpp"
#include "backends/traced_launch.hpp"
#include "launcher/launcher.hpp"
#include "simulator/recording_transport.hpp"
#include "simulator/trace.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::backends {

namespace {

constexpr const char* kCallVariable = "RINGLAB_RUN_CALL";

bool is_set(const char* name) { return std::getenv(name) != nullptr; }

// The variables of the launchers tcp::from_environment understands.
bool started_as_rank() {
  return (is_set("RANK") && is_set("WORLD_SIZE")) ||
         (is_set("SLURM_PROCID") && is_set("SLURM_NTASKS")) ||
         (is_set("OMPI_COMM_WORLD_RANK") && is_set("OMPI_COMM_WORLD_SIZE"));
}

// The world this copy was started for (-1: not started by this backend).
int assigned_call() {
  const char* value = std::getenv(kCallVariable);
  return value ? std::atoi(value) : -1;
}

// A copy started for world k must not repeat what the parent printed before
// world k: its stdout goes to /dev/null from the start until then. This runs
// before main (a static object), so not a single line slips through.
class StdoutSilencer {
 public:
  StdoutSilencer() {
    if (assigned_call() < 0) return;
    const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    saved_ = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (null_fd >= 0 && saved_ >= 0) ::dup2(null_fd, 1);
    if (null_fd >= 0) ::close(null_fd);
  }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    ::dup2(saved_, 1);
    ::close(saved_);
    saved_ = -1;
  }

 private:
  int saved_ = -1;
};
StdoutSilencer silencer;

int next_call = 0;  // the index of the next world this process runs

// argv of this process, from /proc (the backend is not handed main's argv).
std::vector<std::string> own_command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> arguments;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\0', start);
    arguments.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (arguments.empty() || length <= 0)
    throw std::runtime_error(
        "tcp backend: cannot read this program's command line from /proc to start its ranks; "
        "start them yourself with ringlab run --nproc-per-node N -- PROGRAM ARGS");
  // Run the very same executable, whatever PATH says.
  arguments.front().assign(path, static_cast<std::size_t>(length));
  return arguments;
}

// One connection to the other ranks for the whole process: a program that
// runs several worlds in a row (`ringlab tour` under ringlab run) reuses it
// rather than meeting again at the same MASTER_PORT, where a fast rank could
// reach the store of the previous meeting just as rank 0 closes it. Each world
// gets a fresh ProcessGroup on it (its collectives numbered from 0 again; the
// previous world's messages all came first on every connection).
struct RankConnection {
  tcp::WorldSpec me;
  std::shared_ptr<tcp::TcpTransport> transport;
  // Traced launch only: records every operation of this process, all worlds.
  std::shared_ptr<sim::RecordingTransport> recorder;
  std::string trace_path;
  std::size_t trace_max_events = sim::TraceOptions{}.max_events;
  std::int64_t trace_origin_ns = 0;
};

void start_recording(RankConnection& connection) {
  const char* folder = std::getenv(kTraceDirVariable);
  if (!folder || !*folder) return;
  sim::RecordOptions options;
  options.wall_clock = true;
  connection.recorder = std::make_shared<sim::RecordingTransport>(*connection.transport, options);
  connection.trace_path = rank_trace_path(folder, connection.me.rank);
  if (const char* limit = std::getenv(kTraceMaxEventsVariable))
    connection.trace_max_events = std::max<std::size_t>(1, std::strtoull(limit, nullptr, 10));
  if (const char* origin = std::getenv(kTraceOriginVariable))
    connection.trace_origin_ns = std::strtoll(origin, nullptr, 10);
}

// Writes (again) everything recorded so far. Through a temporary file and a
// rename, so the launcher never merges half a file of a rank killed while
// writing. A trace that cannot be written costs the trace, not the run.
void write_trace(const RankConnection& connection) {
  const std::string partial = connection.trace_path + ".partial";
  try {
    {
      std::ofstream out(partial);
      if (!out) throw std::runtime_error("cannot open '" + partial + "'");
      sim::TraceOptions options;
      options.max_events = connection.trace_max_events;
      options.process_name = "ringlab (tcp)";
      options.time_origin_ns = connection.trace_origin_ns;
      // A copy started for world k counts its messages from 0 like the
      // copies of the other worlds, which share the file: series k + 1.
      options.flow_series = static_cast<std::uint32_t>(assigned_call() + 1);
      sim::write_rank_trace(connection.recorder->log(), out, options);
      if (!out) throw std::runtime_error("cannot write '" + partial + "'");
    }
    std::filesystem::rename(partial, connection.trace_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp backend: rank %d: no trace written: %s\n", connection.me.rank, e.what());
  }
}

void run_as_rank(int world, const std::function<void(ProcessGroup&)>& body,
                 const ProcessGroupOptions& group) {
  static RankConnection connection;
  // RINGLAB_TIMEOUT_MS, when set, wins over --timeout-ms (as in
  // tcp::init_process_group); otherwise --timeout-ms also limits the meeting.
  const bool timeout_from_environment = is_set("RINGLAB_TIMEOUT_MS");
  if (!connection.transport) {
    connection.me = tcp::from_environment();  // names a missing or bad variable
    if (!timeout_from_environment) connection.me.timeout = group.timeout;
  }
  const tcp::WorldSpec& me = connection.me;
  if (me.world_size != world)
    throw std::invalid_argument(
        "this process is rank " + std::to_string(me.rank) + " of a world of " +
        std::to_string(me.world_size) + " (WORLD_SIZE or the launcher's variables), but it was "
        "asked to run " + std::to_string(world) + " ranks: pass --world-size " +
        std::to_string(me.world_size) + " (-n " + std::to_string(me.world_size) +
        "), or start " + std::to_string(world) + " ranks (ringlab run --nproc-per-node " +
        std::to_string(world) + " -- ...)");
  if (!connection.transport) {
    connection.transport = tcp::connect(me);
    start_recording(connection);
  }
  ProcessGroupOptions options = group;
  if (timeout_from_environment) options.timeout = me.timeout;
  if (!connection.recorder) {
    ProcessGroup pg(connection.transport, options);
    body(pg);
    return;
  }
  // The group is gone (its queued work finished or abandoned) before the
  // log is read; a failed world still leaves its trace.
  std::exception_ptr failure;
  try {
    ProcessGroup pg(connection.recorder, options);
    body(pg);
  } catch (...) {
    failure = std::current_exception();
  }
  write_trace(connection);
  if (failure) std::rethrow_exception(failure);
}

void spawn_ranks(int world, int call) {
  // Set when a world of this process was traced: later worlds add to it.
  static bool traced_before = false;
  // The time 0 of every world's trace: the first world's start.
  static const std::int64_t trace_origin_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count();
  launch::LaunchOptions options;
  options.name = "ringlab (tcp backend)";
  options.nproc_per_node = world;
  options.program = own_command_line();
  options.extra_environment = {{kCallVariable, std::to_string(call)}};
  const char* trace_output = std::getenv(kTraceOutputVariable);
  launch::LaunchResult result;
  if (trace_output && *trace_output) {
    TraceOptions trace;
    trace.output = trace_output;
    trace.append = traced_before;
    trace.time_origin_ns = trace_origin_ns;
    TraceResult traced;
    result = launch_traced(options, trace, traced);
    traced_before = traced_before || !traced.traced_ranks.empty();
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", options.name.c_str(), traced.message.c_str());
  } else {
    result = launch::launch(options);
  }
  if (result.exit_code != 0) {
    // "Its error is above" only when the rank blamed wrote one.
    const bool said_why = result.first_failure && !result.first_failure->error.empty();
    throw std::runtime_error("tcp backend: " + result.message +
                             (said_why ? " (its error is above; " : " (it printed no error; ") +
                             "run with --backend inproc to compare)");
  }
}

}  // namespace

void run_tcp_world(int world, const RankBody& body, const ProcessGroupOptions& group) {
  const int call = next_call++;
  const int assigned = assigned_call();
  if (assigned >= 0) {
    // A copy started by spawn_ranks: run only the world it was started for.
    if (call < assigned) return;
    silencer.restore();
    run_as_rank(world, body, group);
    std::fflush(stdout);
    std::fflush(stderr);
    std::exit(0);  // the parent runs whatever comes next
  }
  if (started_as_rank())
    run_as_rank(world, body, group);
  else
    spawn_ranks(world, call);
}

std::unique_ptr<ProcessGroup> init_tcp_process_group(ProcessGroupOptions options) {
  tcp::WorldSpec rendezvous = tcp::from_environment();
  if (is_set("RINGLAB_TIMEOUT_MS"))
    options.timeout = rendezvous.timeout;
  else
    rendezvous.timeout = options.timeout;
  return std::make_unique<ProcessGroup>(tcp::connect(rendezvous), std::move(options));
}

}  // namespace ringlab::backends
