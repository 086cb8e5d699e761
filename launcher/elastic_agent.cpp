#include "launcher/elastic_agent.hpp"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "launcher/agent_store.hpp"
#include "launcher/agent_trace.hpp"
#include "launcher/elastic_round.hpp"
#include "launcher/job_ledger.hpp"
#include "launcher/job_summary.hpp"
#include "launcher/launcher.hpp"
#include "launcher/line_stream.hpp"
#include "launcher/rendezvous.hpp"
#include "launcher/signal_pipe.hpp"
#include "launcher/spawn.hpp"
#include "ops/comm_error.hpp"

namespace ringlab::launch {

namespace {

class ElasticAgent {
 public:
  explicit ElasticAgent(const ElasticOptions& options)
      : o_(options),
        log_(options.workers.name, options.workers.stderr_fd),
        store_(o_),
        rendezvous_(o_, store_, log_, trace_),
        ledger_(store_, rendezvous_),
        parts_{o_, log_, trace_, signals_, store_, rendezvous_, ledger_} {}

  int run();

 private:
  using Outcome = RoundEnd::Outcome;

  bool interrupted();
  bool out_of_restarts() const { return restart_count_ >= o_.max_restarts; }
  std::string describe_round(const Round& round, const Endpoint& master) const;
  void say_hello();
  int rounds();
  void make_log_root();

  int end_job(const RoundEnd& end);
  int finish_closed(const std::string& reason);
  int finish_succeeded(const Round& round);
  int finish_interrupted();
  int finish(int exit_code);
  void write_trace(const std::vector<std::string>& other_lanes);
  std::string program_name() const;

  const ElasticOptions& o_;
  AgentLog log_;
  AgentTrace trace_;
  SignalPipe signals_;
  AgentStore store_;
  Rendezvous rendezvous_;
  JobLedger ledger_;
  AgentParts parts_;
  int restart_count_ = 0;
  int interrupted_by_ = 0;
  std::string log_root_;
};

bool ElasticAgent::interrupted() {
  if (const int signal_number = signals_.drain(); signal_number != 0)
    interrupted_by_ = signal_number;
  return interrupted_by_ != 0;
}

std::string ElasticAgent::program_name() const {
  return std::filesystem::path(o_.workers.program.front()).filename().string();
}

void ElasticAgent::make_log_root() {
  log_root_ = launch::make_log_root(o_.log_dir, o_.run_id);
  log_.line("the workers' output goes to " + log_root_ +
            "/attempt_<restart>/<local rank>/{stdout,stderr}.log");
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

// ---- the whole job ----------------------------------------------------------------------

int ElasticAgent::run() {
  validate(o_);
  resolve_program(o_.workers.program.front());  // before any other node waits for this one
  store_.connect();
  rendezvous_.join();
  say_hello();
  if (!o_.log_dir.empty()) make_log_root();
  const std::string lost = "lost the rendezvous store at " + store_.endpoint() + " (";
  const std::string why_lost =
      "): the node that hosts it ended or cannot be reached, and the job with it";
  try {
    return rounds();
  } catch (const StoreLost& e) {
    throw std::runtime_error(lost + e.what() + why_lost + "; this node's workers were stopped");
  } catch (const CommError& e) {
    throw std::runtime_error(lost + e.what() + why_lost);
  }
}

void ElasticAgent::say_hello() {
  const NodeDesc& self = rendezvous_.self();
  log_.line(std::string(store_.hosts() ? "hosting" : "reached") + " the rendezvous store at " +
            store_.endpoint() + " for run '" + o_.run_id + "'; this is " + describe(self) +
            ", its workers listen on " + self.address + "; --nnodes " +
            std::to_string(o_.min_nodes) + ":" + std::to_string(o_.max_nodes) + ", " +
            std::to_string(o_.workers.nproc_per_node) +
            (o_.workers.nproc_per_node == 1 ? " rank" : " ranks") + " per node, up to " +
            std::to_string(o_.max_restarts) + (o_.max_restarts == 1 ? " restart" : " restarts"));
  if (o_.job_token.empty())
    log_.line("this job is open (--rdzv-conf open=true): anyone who reaches " + store_.endpoint() +
              " can join it, close it or change its state");
}

// Round after round until the job ends; returns the exit status.
int ElasticAgent::rounds() {
  std::string why = "the job starts";
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
    const RoundEnd end = run_round(parts_, {round, *master, restart_count_, log_root_});
    switch (end.outcome) {
      case Outcome::Succeeded:
        return finish_succeeded(round);
      case Outcome::Interrupted:
        interrupted_by_ = end.interrupted_by;
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
}

int ElasticAgent::end_job(const RoundEnd& end) {
  // This node is out of restarts: the job ends for every node.
  const std::string reason = end.reason + ", " + restarts_used_up(o_.max_restarts);
  const bool closed_here = end.closed_by_us || rendezvous_.close(reason);
  if (!closed_here) return finish_closed(reason);
  JobOutcome outcome{reason, end.exit_code != 0 ? end.exit_code : 1, end.failure};
  if (end.first_node != 0 && end.first_node != rendezvous_.self().id) {
    // The first failure was another node's: its record is the report's.
    const Milliseconds wait = o_.workers.stop_after + o_.workers.kill_after + Milliseconds(5000);
    if (const auto text = ledger_.failure_of(end.round, end.first_node, wait))
      if (const auto record = failure_from_json(*text)) {
        outcome.first_failure = record;
        outcome.exit_code = record->signal_number != 0 ? 128 + record->signal_number
                                                       : std::max(record->exit_status, 1);
      }
  }
  ledger_.set_outcome(to_json(outcome));
  // The first outcome stored is the job's (another node may have closed it first).
  if (const auto stored = ledger_.outcome(Milliseconds(0)))
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
  if (const auto stored = ledger_.outcome(wait))
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
  const bool all = ledger_.wait_finished(round, o_.exit_barrier_timeout);
  log_.line(all ? "every node's workers finished" : "did not see every node's workers finish");
  trace_.instant("finished", {{"all nodes", all ? "yes" : "no"}});
  return finish(0);
}

int ElasticAgent::finish_interrupted() {
  log_.line("interrupted by signal " + std::to_string(interrupted_by_) +
            (store_.hosts() ? ": ending the job (this node hosts the store)"
                                       : ": this node leaves the job"));
  announce_leaving(parts_, interrupted_by_);
  return finish(128 + interrupted_by_);
}

int ElasticAgent::finish(int exit_code) {
  const std::string lane = trace_.lane_json(rendezvous_.self().id, describe(rendezvous_.self()));
  std::vector<std::string> others;
  try {
    if (store_.hosts())
      others = ledger_.wait_for_goodbyes(o_.rendezvous.close_timeout);
    else
      ledger_.say_goodbye(lane);
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
