// The `tcp` backend: every rank is a process, talking to the others over TCP
// (transport/tcp). The default backend of lessons and `ringlab bench`, and
// init_process_group("tcp") for a program started by a launcher.
//
// Two ways a world of ranks gets here (run_tcp_process_world):
//  - This process already is a rank: `ringlab run` (or torchrun, Slurm, Open
//    MPI) set RANK and WORLD_SIZE (or their own variables). It connects to the
//    other ranks once per process and runs the body on this one rank
//    (run_as_launched_rank).
//  - It is not: like torch.multiprocessing.spawn, it starts `world` ranks as
//    forks of itself at the call (rank_processes.hpp), each connecting,
//    running the body and ending there, and waits for them
//    (start_own_ranks). A failed rank fails the call, named in its exception.
//    A program may run several worlds one after another (`ringlab tour`):
//    each call forks a fresh set of ranks, and what the program prints
//    between the calls it prints once.
//
// Traces: a rank told to trace (RINGLAB_TRACE_DIR, traced_launch.hpp: in the
// environment of a launched rank, among the variables of a forked one) wraps
// its connection in a sim::RecordingTransport with wall-clock times and, after
// each world (also one that failed), writes everything it recorded so far to
// its rank<r>.json through ops/atomic_file; the launcher merges the files.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/rank_processes.hpp"
#include "backends/rows.hpp"
#include "backends/traced_launch.hpp"
#include "ops/atomic_file.hpp"
#include "simulator/recording_transport.hpp"
#include "simulator/trace.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::backends {

namespace {

using Lookup = tcp::EnvironmentLookup;

const char* from_environment(const char* name) { return std::getenv(name); }

// The variables of the launchers tcp::from_environment understands.
bool started_as_rank() {
  const auto set = [](const char* name) { return std::getenv(name) != nullptr; };
  return (set("RANK") && set("WORLD_SIZE")) || (set("SLURM_PROCID") && set("SLURM_NTASKS")) ||
         (set("OMPI_COMM_WORLD_RANK") && set("OMPI_COMM_WORLD_SIZE"));
}

// One rank's connection to the others, and its trace when it records one.
struct RankConnection {
  tcp::WorldSpec me;
  // RINGLAB_TIMEOUT_MS, when set, wins over the group's timeout (as in
  // init_process_group); otherwise the group's timeout also limits the meeting.
  bool timeout_from_environment = false;
  std::shared_ptr<tcp::TcpTransport> transport;
  // Traced only: records every operation of this rank, all its worlds.
  std::shared_ptr<sim::RecordingTransport> recorder;
  std::optional<RankTrace> trace;
};

// Where and who this rank is, from its variables; not connected yet.
RankConnection rank_of(const Lookup& lookup, const ProcessGroupOptions& group) {
  RankConnection connection;
  connection.me = tcp::from_environment(lookup);  // names a missing or bad variable
  connection.timeout_from_environment = lookup("RINGLAB_TIMEOUT_MS") != nullptr;
  if (!connection.timeout_from_environment) connection.me.timeout = group.timeout;
  return connection;
}

void connect(RankConnection& connection, const Lookup& lookup) {
  connection.transport = tcp::connect(connection.me);
  connection.trace = rank_trace(connection.me.rank, lookup);
  if (!connection.trace) return;
  sim::RecordOptions options;
  options.wall_clock = true;
  connection.recorder = std::make_shared<sim::RecordingTransport>(*connection.transport, options);
}

// Writes (again) everything recorded so far, atomically: the launcher never
// merges half a file of a rank killed while writing. A trace that cannot be
// written costs the trace, not the run.
void write_trace(const RankConnection& connection) {
  const RankTrace& trace = *connection.trace;
  sim::TraceOptions options;
  options.max_events = trace.max_events;
  options.process_name = "ringlab (tcp)";
  options.time_origin_ns = trace.time_origin_ns;
  options.flow_series = trace.flow_series;
  try {
    write_file_atomically(trace.path, "trace file", [&](std::ostream& out) {
      sim::write_rank_trace(connection.recorder->log(), out, options);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcp backend: rank %d: no trace written: %s\n", connection.me.rank,
                 e.what());
  }
}

// One world on a connected rank: a fresh ProcessGroup (its collectives
// numbered from 0; an earlier world's messages all came first on every
// connection), gone before the log is read. A failed world still leaves its
// trace.
std::string run_world_on(const RankConnection& connection, const AnswerBody& body,
                         const ProcessGroupOptions& group) {
  ProcessGroupOptions options = group;
  if (connection.timeout_from_environment) options.timeout = connection.me.timeout;
  if (!connection.recorder) {
    ProcessGroup pg(connection.transport, options);
    return body(pg);
  }
  std::string answer;
  std::exception_ptr failure;
  try {
    ProcessGroup pg(connection.recorder, options);
    answer = body(pg);
  } catch (...) {
    failure = std::current_exception();
  }
  write_trace(connection);
  if (failure) std::rethrow_exception(failure);
  return answer;
}

void check_world(const tcp::WorldSpec& me, int world) {
  if (me.world_size == world) return;
  throw std::invalid_argument(
      "this process is rank " + std::to_string(me.rank) + " of a world of " +
      std::to_string(me.world_size) + " (WORLD_SIZE or the launcher's variables), but it was "
      "asked to run " + std::to_string(world) + " ranks: pass --world-size " +
      std::to_string(me.world_size) + " (-n " + std::to_string(me.world_size) + "), or start " +
      std::to_string(world) + " ranks (ringlab run --nproc-per-node " + std::to_string(world) +
      " -- ...)");
}

// This process is one rank of a launched job. It keeps one connection for all
// the worlds it runs (`ringlab tour` under ringlab run) rather than meeting
// again at the same MASTER_PORT, where a fast rank could reach the store of
// the previous meeting just as rank 0 closes it: the one connection of this
// process, as torch.distributed keeps its default group. Its answer is the
// only one this process has.
std::vector<std::string> run_as_launched_rank(int world, const AnswerBody& body,
                                              const ProcessGroupOptions& group) {
  static RankConnection connection;
  if (!connection.transport) {
    RankConnection meeting = rank_of(from_environment, group);
    check_world(meeting.me, world);
    connect(meeting, from_environment);
    connection = std::move(meeting);
  }
  check_world(connection.me, world);
  std::vector<std::string> answers(static_cast<std::size_t>(world));
  answers[static_cast<std::size_t>(connection.me.rank)] = run_world_on(connection, body, group);
  return answers;
}

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This process is no rank: it forks `world` of them, which end when their
// body does (rank_processes.hpp), and waits for them.
std::vector<std::string> start_own_ranks(int world, const AnswerBody& body,
                                         const ProcessGroupOptions& group, TraceSession* session,
                                         bool answers) {
  RankProcessOptions options;
  options.name = "ringlab (tcp backend)";
  options.answers = answers;
  std::uint32_t flow_series = 0;
  if (session) {
    if (session->time_origin_ns == 0) session->time_origin_ns = steady_now_ns();
    options.trace = TraceOptions{};
    options.trace->output = session->output;
    options.trace->append = session->written;
    options.trace->time_origin_ns = session->time_origin_ns;
    // Each world's ranks count their messages from 0: a series per world.
    flow_series = ++session->worlds;
  }
  RankProcesses ranks = run_rank_processes(world, options, [&](const RankStart& start) {
    RankConnection connection = rank_of(start.lookup(), group);
    connect(connection, start.lookup());
    if (connection.trace) connection.trace->flow_series = flow_series;
    return run_world_on(connection, body, group);
  });
  if (session) {
    session->written = session->written || !ranks.traced.traced_ranks.empty();
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", options.name.c_str(), ranks.traced.message.c_str());
  }
  const launch::LaunchResult& result = ranks.launch;
  if (session && ranks.traced.failed && result.exit_code == 0)
    throw std::runtime_error("--trace " + session->output + " was not written (see above)");
  if (result.exit_code != 0) {
    // "Its error is above" only when the rank blamed wrote one.
    const bool said_why = result.first_failure && !result.first_failure->error.empty();
    throw std::runtime_error("tcp backend: " + result.message +
                             (said_why ? " (its error is above; " : " (it printed no error; ") +
                             "run with --backend inproc to compare)");
  }
  return ranks.answers;
}

}  // namespace

std::vector<std::string> run_tcp_process_world(int world, const AnswerBody& body,
                                               const ProcessGroupOptions& group,
                                               TraceSession* trace) {
  if (started_as_rank()) return run_as_launched_rank(world, body, group);
  return start_own_ranks(world, body, group, trace, true);
}

void run_tcp_world(int world, const RankBody& body, const ProcessGroupOptions& group) {
  const AnswerBody no_answer = [&](ProcessGroup& pg) {
    body(pg);
    return std::string();
  };
  if (started_as_rank())
    run_as_launched_rank(world, no_answer, group);
  else
    start_own_ranks(world, no_answer, group, nullptr, false);
}

std::unique_ptr<ProcessGroup> init_tcp_process_group(ProcessGroupOptions options) {
  tcp::WorldSpec rendezvous = tcp::from_environment();
  if (std::getenv("RINGLAB_TIMEOUT_MS"))
    options.timeout = rendezvous.timeout;
  else
    rendezvous.timeout = options.timeout;
  return std::make_unique<ProcessGroup>(tcp::connect(rendezvous), std::move(options));
}

}  // namespace ringlab::backends
