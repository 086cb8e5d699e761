// The `tcp` backend: every rank is a process, talking to the others over TCP
// (transport/tcp). The default backend of lessons and `ringlab bench`, and
// init_process_group("tcp") for a program started by a launcher.
//
// Its worlds come to be as rank_world.hpp decides: in a process a launcher
// started as a rank, that one rank, on the connection the process keeps for
// all its worlds; otherwise `world` ranks forked at the call, each
// connecting, running the body and ending there (a program may run several
// worlds one after another, `ringlab tour`: each call forks a fresh set of
// ranks, and what the program prints between the calls it prints once).
// What this file supplies is one rank's connection and a world run on it.
//
// Traces: a rank told to trace (RINGLAB_TRACE_DIR, rank_trace.hpp: in the
// environment of a launched rank, among the variables of a forked one)
// records through a RankRecorder and, after each world (also one that
// failed), writes everything it recorded so far to its rank<r>.json; the
// launcher merges the files. A program's own rank (init_process_group under
// `ringlab run --trace`) writes its file when its process group goes.
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/rank_trace.hpp"
#include "backends/rank_world.hpp"
#include "backends/rows.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::backends {

namespace {

// One rank's connection to the others, and its recorder when it traces.
struct TcpRank final : RankConnection {
  std::shared_ptr<tcp::TcpTransport> transport;
  std::optional<RankRecorder> recorder;
};

std::unique_ptr<RankConnection> connect_rank(const RankSpec& me, const EnvironmentLookup& lookup) {
  auto rank = std::make_unique<TcpRank>();
  rank->transport = tcp::connect(me.world);
  if (std::optional<RankTrace> trace = rank_trace(lookup))
    rank->recorder.emplace(*rank->transport, me.world.rank, me.world.world_size, std::move(*trace),
                           "ringlab (tcp)");
  return rank;
}

// One world on a connected rank: a fresh ProcessGroup (its collectives
// numbered from 0; an earlier world's messages all came first on every
// connection), gone before the trace is written. A failed world still
// leaves its trace.
std::string run_on_rank(TcpRank& rank, const RankSpec& me, const AnswerBody& body,
                        const ProcessGroupOptions& group) {
  ProcessGroupOptions options = group;
  options.timeout = me.group_timeout(group.timeout);
  if (!rank.recorder) {
    ProcessGroup pg(rank.transport, options);
    return body(pg);
  }
  std::string answer;
  std::exception_ptr failure;
  try {
    ProcessGroup pg(rank.recorder->transport(), options);
    answer = body(pg);
  } catch (...) {
    failure = std::current_exception();
  }
  if (const std::string line = rank.recorder->write(); !line.empty())
    std::fprintf(stderr, "tcp backend: %s\n", line.c_str());
  if (failure) std::rethrow_exception(failure);
  return answer;
}

ProcessWorld tcp_world(int world, const AnswerBody& body, const ProcessGroupOptions& group) {
  ProcessWorld w;
  w.name = "tcp backend";
  w.world = world;
  w.timeout = group.timeout;
  w.connect = connect_rank;
  w.run = [&body, &group](RankConnection& rank, const RankSpec& me) {
    return run_on_rank(static_cast<TcpRank&>(rank), me, body, group);
  };
  w.forks.name = "ringlab (tcp backend)";
  w.failure_hint = "run with --backend inproc to compare";
  return w;
}

}  // namespace

std::vector<std::string> run_tcp_process_world(int world, const AnswerBody& body,
                                               const ProcessGroupOptions& group,
                                               TraceSession* trace) {
  ProcessWorld w = tcp_world(world, body, group);
  w.trace = trace;
  return run_process_world(w);
}

void run_tcp_world(int world, const RankBody& body, const ProcessGroupOptions& group) {
  const AnswerBody no_answer = [&](ProcessGroup& pg) {
    body(pg);
    return std::string();
  };
  ProcessWorld w = tcp_world(world, no_answer, group);
  w.forks.answers = false;
  run_process_world(w);
}

namespace {

// A program's own rank under `ringlab run --trace`: its connection and
// recorder live as long as its process group (which holds them through the
// recorder's transport), and the trace is written when the group goes,
// also when an exception takes it (a failed run keeps its trace).
struct TracedTcpRank {
  TracedTcpRank(std::shared_ptr<tcp::TcpTransport> connection, const RankSpec& me, RankTrace trace)
      : transport(std::move(connection)),
        recorder(*transport, me.world.rank, me.world.world_size, std::move(trace),
                 "ringlab (tcp)") {}
  ~TracedTcpRank() {
    if (const std::string line = recorder.write(); !line.empty())
      std::fprintf(stderr, "tcp backend: %s\n", line.c_str());
  }
  std::shared_ptr<tcp::TcpTransport> transport;
  RankRecorder recorder;
};

}  // namespace

std::unique_ptr<ProcessGroup> init_tcp_process_group(ProcessGroupOptions options) {
  const EnvironmentLookup environment = process_environment();
  const RankSpec me = rank_spec(environment, options.timeout);
  options.timeout = me.group_timeout(options.timeout);
  std::optional<RankTrace> trace = rank_trace(environment);
  if (!trace) return std::make_unique<ProcessGroup>(tcp::connect(me.world), std::move(options));
  auto rank = std::make_shared<TracedTcpRank>(tcp::connect(me.world), me, std::move(*trace));
  std::shared_ptr<Transport> recorded(rank, rank->recorder.transport().get());
  return std::make_unique<ProcessGroup>(std::move(recorded), std::move(options));
}

}  // namespace ringlab::backends
