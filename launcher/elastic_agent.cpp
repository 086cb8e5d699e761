#include "launcher/elastic_agent.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>

#include "launcher/agent_trace.hpp"
#include "launcher/blame.hpp"
#include "launcher/job_summary.hpp"
#include "launcher/line_stream.hpp"
#include "launcher/rendezvous.hpp"
#include "launcher/signal_pipe.hpp"
#include "launcher/spawn.hpp"
#include "launcher/supervisor.hpp"
#include "transport/transport.hpp"

namespace ringlab::launch {

namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(Milliseconds ms) {
  const long long tenths = ms.count() / 100;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") +
         " s";
}

std::string rank_range(int first, int count) {
  return count == 1 ? "rank " + std::to_string(first)
                    : "ranks " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

// The store went away under a running round.
class StoreLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ElasticAgent {
 public:
  explicit ElasticAgent(const ElasticOptions& options)
      : o_(options),
        log_(options.workers.name, options.workers.stderr_fd),
        rendezvous_(o_, log_, trace_) {}

  int run();

 private:
  enum class Outcome { Succeeded, WorkersFailed, MembershipChanged, Closed, Interrupted };
  struct RoundEnd {
    Outcome outcome = Outcome::Succeeded;
    std::string reason;
    int exit_code = 0;
    std::optional<FailureRecord> failure;
    bool closed_by_us = false;  // we ended the job (out of restarts)
    long long round = 0;
    // The node whose failure came first in this round, and what is known of
    // it here when that is another node (ours then followed from it).
    int first_node = 0;
    std::string elsewhere;
  };

  bool interrupted();
  bool out_of_restarts() const { return restart_count_ >= o_.max_restarts; }
  std::string restarts_used_up() const;
  LaunchOptions workers_for(const Round& round, const Endpoint& master) const;
  std::string describe_round(const Round& round, const Endpoint& master) const;
  RoundEnd run_round(const Round& round, const Endpoint& master);
  void make_log_root();

  int end_job(const RoundEnd& end);
  int finish_closed(const std::string& reason);
  int finish_succeeded(const Round& round);
  void announce_leaving();
  int finish_interrupted();
  int finish(int exit_code);
  void write_trace(const std::vector<std::string>& other_lanes);
  std::string program_name() const;

  const ElasticOptions& o_;
  AgentLog log_;
  AgentTrace trace_;
  SignalPipe signals_;
  Rendezvous rendezvous_;
  int restart_count_ = 0;
  int interrupted_by_ = 0;
  long long round_number_ = -1;
  std::string log_root_;
};

bool ElasticAgent::interrupted() {
  if (const int signal_number = signals_.drain(); signal_number != 0)
    interrupted_by_ = signal_number;
  return interrupted_by_ != 0;
}

std::string ElasticAgent::restarts_used_up() const {
  if (o_.max_restarts == 0) return "and --max-restarts is 0";
  if (o_.max_restarts == 1) return "and the one restart of --max-restarts 1 is used up";
  return "and all " + std::to_string(o_.max_restarts) + " restarts of --max-restarts " +
         std::to_string(o_.max_restarts) + " are used up";
}

std::string ElasticAgent::program_name() const {
  return std::filesystem::path(o_.workers.program.front()).filename().string();
}

void ElasticAgent::make_log_root() {
  log_root_ = launch::make_log_root(o_.log_dir, o_.run_id);
  log_.line("the workers' output goes to " + log_root_ +
            "/attempt_<restart>/<local rank>/{stdout,stderr}.log");
}

LaunchOptions ElasticAgent::workers_for(const Round& round, const Endpoint& master) const {
  LaunchOptions w = o_.workers;
  w.nnodes = static_cast<int>(round.nodes.size());
  w.node_rank = round.group_rank;
  w.master_addr = master.host;
  w.master_port = master.port;
  w.run_id = o_.run_id;
  w.restart_count = restart_count_;
  w.max_restarts = o_.max_restarts;
  // The workers listen where the other nodes reach this one.
  if (const char* bind = std::getenv("RINGLAB_BIND_ADDR"); !bind || !*bind)
    w.extra_environment.emplace_back("RINGLAB_BIND_ADDR", rendezvous_.self().address);
  if (!log_root_.empty())
    w.log_folder = w.error_file_folder = log_root_ + "/attempt_" + std::to_string(restart_count_);
  return w;
}

std::string ElasticAgent::describe_round(const Round& round, const Endpoint& master) const {
  std::string nodes;
  for (std::size_t g = 0; g < round.nodes.size(); ++g)
    nodes += (g ? "; " : "") + describe(round.nodes[g]) + ": " +
             rank_range(static_cast<int>(g) * round.nproc_per_node, round.nproc_per_node);
  return "round " + std::to_string(round.number) + ": " + std::to_string(round.nodes.size()) +
         (round.nodes.size() == 1 ? " node" : " nodes") + ", world size " +
         std::to_string(round.world_size()) + " (" + nodes + "); this node is group rank " +
         std::to_string(round.group_rank) + "; master " + master.host + ":" +
         std::to_string(master.port) + "; restart " + std::to_string(restart_count_) + " of " +
         std::to_string(o_.max_restarts);
}

// ---- one round ---------------------------------------------------------------------

ElasticAgent::RoundEnd ElasticAgent::run_round(const Round& round, const Endpoint& master) {
  Supervisor workers(workers_for(round, master), master.port, signals_);
  workers.start();
  const int first_rank = round.group_rank * round.nproc_per_node;
  trace_.begin(
      "round " + std::to_string(round.number) + ": world size " +
          std::to_string(round.world_size()),
      {{"nodes", std::to_string(round.nodes.size())},
       {"group rank", std::to_string(round.group_rank)},
       {"ranks", rank_range(first_rank, round.nproc_per_node)},
       {"restart", std::to_string(restart_count_) + " of " + std::to_string(o_.max_restarts)},
       {"master", master.host + ":" + std::to_string(master.port)}});

  RoundEnd end;
  std::optional<MembershipChange> change;
  bool failure_handled = false;
  bool announced_leaving = false;
  std::string lost_store;
  auto next_check = Clock::now();
  // A first error that names a rank of another node ("rank 1: rank 3 failed
  // or stopped answering") is that node's failure to claim: our ranks learn of
  // it through the transport before its agent reaps the rank. Our claim waits
  // a while for that node's.
  const auto on_this_node = [&](int rank) {
    return rank >= first_rank && rank < first_rank + round.nproc_per_node;
  };
  std::optional<Clock::time_point> claim_after;
  const auto may_claim = [&] {
    const int named = workers.first_error_names();
    if (named < 0 || on_this_node(named)) return true;
    if (!claim_after)
      claim_after = Clock::now() + std::max<Milliseconds>(Milliseconds(1000), 2 * o_.monitor_interval);
    return Clock::now() >= *claim_after;
  };
  // What a local failure is blamed on settles once every local rank has
  // ended or kCauseWindow has passed (blame.hpp): the rank that failed first
  // is often reaped after the peers that failed because of it, and its own
  // report read later. The other nodes are told only the settled cause.
  std::optional<Clock::time_point> failure_seen_at;
  const auto blame_settled = [&] {
    if (!failure_seen_at) failure_seen_at = Clock::now();
    return workers.finished() || Clock::now() - *failure_seen_at >= kCauseWindow;
  };
  const auto claim_pending = [&] {
    return lost_store.empty() && workers.trouble_seen() && end.first_node == 0 &&
           workers.interrupted_by() == 0 && !may_claim();
  };
  while (!workers.finished() || claim_pending()) {
    const auto until_check = std::chrono::ceil<Milliseconds>(next_check - Clock::now());
    Milliseconds wait = std::clamp(until_check, Milliseconds(0), o_.monitor_interval);
    if (failure_seen_at && !failure_handled)  // wake when the blame settles
      wait = std::clamp(
          std::chrono::ceil<Milliseconds>(*failure_seen_at + kCauseWindow - Clock::now()),
          Milliseconds(0), wait);
    if (workers.finished())
      std::this_thread::sleep_for(std::min(wait, Milliseconds(50)));
    else
      workers.poll(wait);
    if (!lost_store.empty()) continue;
    try {
      rendezvous_.keep_alive();
      if (workers.interrupted_by() != 0 && !announced_leaving) {
        // Tell the others before our workers stop (their peers would fail
        // first and blame each other).
        announced_leaving = true;
        interrupted_by_ = workers.interrupted_by();
        announce_leaving();
      }
      // Which node's trouble came first is settled in the store at the first
      // sign of it here (a rank's error line comes before the rank exits).
      if (workers.trouble_seen() && end.first_node == 0 && may_claim())
        end.first_node = rendezvous_.claim_first_failure(round.number);
      if (workers.failure_seen() && !failure_handled && !claim_pending() && blame_settled()) {
        // Tell the other nodes now; our other workers get stop_after to
        // fail by themselves first (the supervisor does that).
        failure_handled = true;
        const LaunchResult so_far = workers.result();
        const std::string why = so_far.message.empty() ? "a worker failed" : so_far.message;
        if (end.first_node == 0) end.first_node = rendezvous_.claim_first_failure(round.number);
        if (end.first_node != rendezvous_.self().id) {
          const std::string last = rendezvous_.last_change();
          const std::string first = "node " + std::to_string(end.first_node);
          end.elsewhere = last.rfind(first + " (", 0) == 0 ? last : first + " failed first";
        } else if (const auto departed = rendezvous_.departure(round)) {
          // No failure elsewhere, but a node left the round (stopped by its
          // user): ours follows from that.
          end.elsewhere = *departed;
        }
        const std::string told =
            end.elsewhere.empty() ? why : "its workers failed after " + end.elsewhere;
        if (out_of_restarts())
          end.closed_by_us = rendezvous_.close(told + ", " + restarts_used_up());
        else
          rendezvous_.leave(told);
        trace_.instant("worker failure", {{"what", why}});
      }
      if (!change && !failure_handled && workers.interrupted_by() == 0 &&
          Clock::now() >= next_check) {
        next_check = Clock::now() + o_.monitor_interval;
        change = rendezvous_.check(round);
        if (change) {
          if (!change->closed && out_of_restarts())
            end.closed_by_us = rendezvous_.close(change->reason + ", " + restarts_used_up());
          log_.line((change->closed ? "the job ended: " : "") + change->reason +
                    ": stopping this node's workers (SIGTERM, then SIGKILL after " +
                    seconds_text(o_.workers.kill_after) + ")");
          trace_.end();
          trace_.begin("stopping", {{"reason", change->reason}});
          workers.stop(change->reason, 1);
        }
      }
    } catch (const CommError& e) {
      lost_store = e.what();
      workers.stop("lost the rendezvous store", 1);
    }
  }
  trace_.end();
  if (!lost_store.empty()) throw StoreLost(lost_store);

  const LaunchResult result = workers.result();
  if (workers.interrupted_by() != 0) {
    interrupted_by_ = workers.interrupted_by();
    end.outcome = Outcome::Interrupted;
    return end;
  }
  if (failure_handled || (!change && result.exit_code != 0)) {
    end.outcome = Outcome::WorkersFailed;
    end.round = round.number;
    const std::string here = result.message.empty() ? "a worker failed" : result.message;
    end.reason = end.elsewhere.empty() ? here : end.elsewhere + " (then here: " + here + ")";
    end.exit_code = result.exit_code != 0 ? result.exit_code : 1;
    if (result.first_failure) {
      FailureRecord record = failure_record(*result.first_failure, round.nproc_per_node);
      record.node = rendezvous_.self().id;
      record.host = rendezvous_.self().host;
      record.agent_pid = rendezvous_.self().pid;
      record.round = round.number;
      record.restart_count = restart_count_;
      if (!log_root_.empty()) {
        const auto file = std::filesystem::path(log_root_) /
                          ("attempt_" + std::to_string(restart_count_)) /
                          std::to_string(record.local_rank) / "error.json";
        if (std::filesystem::exists(file)) record.error_file = file.string();
      }
      end.failure = record;
      try {
        rendezvous_.record_failure(round.number, to_json(record));
      } catch (const CommError&) {
        // The store is gone: the next look at it says so.
      }
    }
    return end;
  }
  if (change) {
    end.outcome = change->closed ? Outcome::Closed : Outcome::MembershipChanged;
    end.reason = change->reason;
    return end;
  }
  end.outcome = Outcome::Succeeded;
  return end;
}

// ---- the whole job ----------------------------------------------------------------------

int ElasticAgent::run() {
  validate(o_);
  resolve_program(o_.workers.program.front());  // before any other node waits for this one
  rendezvous_.connect();
  const NodeDesc& self = rendezvous_.self();
  log_.line(std::string(rendezvous_.hosts_store() ? "hosting" : "reached") +
            " the rendezvous store at " + rendezvous_.endpoint() + " for run '" + o_.run_id +
            "'; this is " + describe(self) + ", its workers listen on " + self.address +
            "; --nnodes " + std::to_string(o_.min_nodes) + ":" + std::to_string(o_.max_nodes) +
            ", " + std::to_string(o_.workers.nproc_per_node) +
            (o_.workers.nproc_per_node == 1 ? " rank" : " ranks") + " per node, up to " +
            std::to_string(o_.max_restarts) + (o_.max_restarts == 1 ? " restart" : " restarts"));
  if (!o_.log_dir.empty()) make_log_root();

  std::string why = "the job starts";
  try {
    for (;;) {
      trace_.begin("rendezvous", {{"why", why}});
      Round round;
      try {
        round = rendezvous_.next_round([this] { return interrupted(); });
      } catch (const RendezvousClosed& e) {
        trace_.end();
        return finish_closed(e.what());
      } catch (const RendezvousInterrupted&) {
        trace_.end();
        return finish_interrupted();
      }
      round_number_ = round.number;
      const std::optional<Endpoint> master = rendezvous_.master_of(
          round, o_.master_addr, o_.master_port, [this] { return interrupted(); });
      trace_.end(
          {{"round", std::to_string(round.number)}, {"nodes", std::to_string(round.nodes.size())}});
      if (interrupted_by_ != 0) return finish_interrupted();
      if (!master) {
        why = "round " + std::to_string(round.number) + " ended before its workers started";
        continue;
      }
      log_.line(describe_round(round, *master));
      const RoundEnd end = run_round(round, *master);
      switch (end.outcome) {
        case Outcome::Succeeded:
          return finish_succeeded(round);
        case Outcome::Interrupted:
          return finish_interrupted();
        case Outcome::Closed:
          return finish_closed(end.reason);
        case Outcome::WorkersFailed:
        case Outcome::MembershipChanged:
          if (out_of_restarts()) return end_job(end);
          ++restart_count_;
          log_.line("restart " + std::to_string(restart_count_) + " of " +
                    std::to_string(o_.max_restarts) + ": " + end.reason);
          trace_.instant("restart " + std::to_string(restart_count_), {{"reason", end.reason}});
          rendezvous_.leave("restarting after: " + end.reason);
          why = end.reason;
      }
    }
  } catch (const StoreLost& e) {
    throw std::runtime_error("lost the rendezvous store at " + rendezvous_.endpoint() + " (" +
                             e.what() +
                             "): the node that hosts it ended or cannot be reached, and the job "
                             "with it; this node's workers were stopped");
  } catch (const CommError& e) {
    throw std::runtime_error("lost the rendezvous store at " + rendezvous_.endpoint() + " (" +
                             e.what() +
                             "): the node that hosts it ended or cannot be reached, and the job "
                             "with it");
  }
}

int ElasticAgent::end_job(const RoundEnd& end) {
  // This node is out of restarts: the job ends for every node.
  const std::string reason = end.reason + ", " + restarts_used_up();
  const bool closed_here = end.closed_by_us || rendezvous_.close(reason);
  if (!closed_here) return finish_closed(reason);
  JobOutcome outcome{reason, end.exit_code != 0 ? end.exit_code : 1, end.failure};
  if (end.first_node != 0 && end.first_node != rendezvous_.self().id) {
    // The first failure was another node's: its record is the report's.
    const Milliseconds wait = o_.workers.stop_after + o_.workers.kill_after + Milliseconds(5000);
    if (const auto text = rendezvous_.failure_of(end.round, end.first_node, wait))
      if (const auto record = failure_from_json(*text)) {
        outcome.first_failure = record;
        outcome.exit_code = record->signal_number != 0 ? 128 + record->signal_number
                                                       : std::max(record->exit_status, 1);
      }
  }
  rendezvous_.set_outcome(to_json(outcome));
  // The first outcome stored is the job's (another node may have closed it first).
  if (const auto stored = rendezvous_.outcome(Milliseconds(0)))
    if (const auto parsed = outcome_from_json(*stored)) outcome = *parsed;
  log_.line("the job ended: " + outcome.reason);
  write_all(o_.workers.stderr_fd, format_summary(outcome, program_name()));
  trace_.instant("job failed", {{"reason", outcome.reason}});
  return finish(outcome.exit_code);
}

int ElasticAgent::finish_closed(const std::string& reason) {
  log_.line("the job ended: " + reason);
  trace_.instant("job ended", {{"reason", reason}});
  // The node that ended it stores the report once its workers are stopped.
  const Milliseconds wait =
      std::min(o_.rendezvous.close_timeout, o_.workers.stop_after + o_.workers.kill_after +
                                                2 * o_.monitor_interval + Milliseconds(5000));
  int exit_code = 1;
  if (const auto stored = rendezvous_.outcome(wait))
    if (const auto outcome = outcome_from_json(*stored)) {
      write_all(o_.workers.stderr_fd, format_summary(*outcome, program_name()));
      exit_code = outcome->exit_code;
    }
  return finish(exit_code);
}

int ElasticAgent::finish_succeeded(const Round& round) {
  log_.line("this node's workers finished (round " + std::to_string(round.number) +
            ", world size " + std::to_string(round.world_size()) +
            "); waiting for the other nodes' (exit barrier, up to " +
            seconds_text(o_.exit_barrier_timeout) + ")");
  const bool all = rendezvous_.wait_finished(round, o_.exit_barrier_timeout);
  log_.line(all ? "every node's workers finished" : "did not see every node's workers finish");
  trace_.instant("finished", {{"all nodes", all ? "yes" : "no"}});
  return finish(0);
}

void ElasticAgent::announce_leaving() {
  const std::string why = "its agent was interrupted by signal " + std::to_string(interrupted_by_);
  try {
    if (rendezvous_.hosts_store())
      rendezvous_.close(describe(rendezvous_.self()) + ", which hosts the rendezvous store, " +
                        why);
    else
      rendezvous_.leave(why);
  } catch (const CommError&) {
    // The store is gone already: nothing to tell.
  }
}

int ElasticAgent::finish_interrupted() {
  log_.line("interrupted by signal " + std::to_string(interrupted_by_) +
            (rendezvous_.hosts_store() ? ": ending the job (this node hosts the store)"
                                       : ": this node leaves the job"));
  announce_leaving();
  return finish(128 + interrupted_by_);
}

int ElasticAgent::finish(int exit_code) {
  const std::string lane = trace_.lane_json(rendezvous_.self().id, describe(rendezvous_.self()));
  std::vector<std::string> others;
  try {
    if (rendezvous_.hosts_store())
      others = rendezvous_.wait_for_goodbyes(o_.rendezvous.close_timeout);
    else
      rendezvous_.say_goodbye(lane);
  } catch (const CommError&) {
    // The host is gone: the others have nobody to say goodbye to.
  }
  write_trace(others);
  return exit_code;
}

void ElasticAgent::write_trace(const std::vector<std::string>& other_lanes) {
  if (o_.trace_output.empty()) return;
  std::vector<std::string> lanes{
      trace_.lane_json(rendezvous_.self().id, describe(rendezvous_.self()))};
  lanes.insert(lanes.end(), other_lanes.begin(), other_lanes.end());
  try {
    AgentTrace::write_file(o_.trace_output, lanes);
    log_.line("trace of " + std::to_string(lanes.size()) + " agent(s) written to " +
              o_.trace_output + "; open it in https://ui.perfetto.dev or chrome://tracing");
  } catch (const std::exception& e) {
    log_.line(e.what());
  }
}

}  // namespace

int run_elastic(const ElasticOptions& options) {
  ElasticAgent agent(options);
  return agent.run();
}

}  // namespace ringlab::launch
