#include "launcher/elastic_round.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "launcher/blame.hpp"
#include "launcher/launcher.hpp"
#include "launcher/token_maker.hpp"
#include "launcher/supervisor.hpp"
#include "ops/comm_error.hpp"

namespace ringlab::launch {

namespace {

using Clock = std::chrono::steady_clock;

Milliseconds until(Clock::time_point when) {
  return std::chrono::ceil<Milliseconds>(when - Clock::now());
}

// The workers of a round: the agent's options with the round's ranks, master
// and restart, the job's token, and their log folder.
LaunchOptions workers_for(const AgentParts& agent, const RoundPlan& plan) {
  const ElasticOptions& o = agent.options;
  LaunchOptions w = o.workers;
  w.nnodes = static_cast<int>(plan.round.nodes.size());
  w.node_rank = plan.round.group_rank;
  w.master_addr = plan.master.host;
  w.master_port = plan.master.port;
  w.run_id = o.run_id;
  w.restart_count = plan.restart_count;
  w.max_restarts = o.max_restarts;
  // The workers listen where the other nodes reach this one.
  if (const char* bind = std::getenv("RINGLAB_BIND_ADDR"); !bind || !*bind)
    w.extra_environment.emplace_back("RINGLAB_BIND_ADDR", agent.rendezvous.self().address);
  // They prove to each other that they belong to this job, as the agents do.
  if (!o.job_token.empty()) w.extra_environment.emplace_back(kJobTokenVariable, o.job_token);
  if (!plan.log_root.empty())
    w.log_folder = w.error_file_folder =
        plan.log_root + "/attempt_" + std::to_string(plan.restart_count);
  return w;
}

// One round, watched until its workers are done. Its phase moves at most
// once per event (the file comment of elastic_round.hpp lists them):
//
//   Running --membership--> Stopping --settled failure--> FailureTold
//   Running --settled failure--> FailureTold
//   any --store lost--> StoreLost
//
// An interrupt changes no phase: the workers stop by themselves (the
// supervisor saw the signal), and the round ends Interrupted.
class RoundWatch {
 public:
  RoundWatch(AgentParts& agent, const RoundPlan& plan)
      : agent_(agent),
        o_(agent.options),
        plan_(plan),
        round_(plan.round),
        first_rank_(round_.group_rank * round_.nproc_per_node),
        workers_(workers_for(agent, plan), plan.master.port, agent.signals) {}

  RoundEnd run();

 private:
  enum class Phase { Running, Stopping, FailureTold, StoreLost };

  // The events.
  void on_interrupt();
  void on_trouble();
  void on_settled_failure();
  void on_membership_change(const MembershipChange& change);
  void on_store_lost(const std::string& what);

  void begin_trace();
  bool watching();
  void wait();
  void look();
  bool on_this_node(int rank) const;
  bool may_claim();
  bool claim_pending();
  bool blame_settled();
  bool out_of_restarts() const { return plan_.restart_count >= o_.max_restarts; }
  void tell_others(const std::string& told);
  RoundEnd end();
  void record_failure(const LaunchResult& result);

  AgentParts& agent_;
  const ElasticOptions& o_;
  const RoundPlan& plan_;
  const Round& round_;
  const int first_rank_;
  Supervisor workers_;
  Phase phase_ = Phase::Running;
  std::optional<MembershipChange> change_;
  std::string lost_store_;
  bool leaving_told_ = false;
  RoundEnd end_;
  Clock::time_point next_look_ = Clock::now();
  // A first error that names a rank of another node is that node's failure
  // to claim: our claim waits until then for that node's.
  std::optional<Clock::time_point> claim_after_;
  // When this node first saw a failure of its own (the blame settles from there).
  std::optional<Clock::time_point> failure_seen_at_;
};

RoundEnd RoundWatch::run() {
  workers_.start();
  begin_trace();
  while (watching()) {
    wait();
    look();
  }
  agent_.trace.end();
  if (phase_ == Phase::StoreLost) throw StoreLost(lost_store_);
  return end();
}

void RoundWatch::begin_trace() {
  agent_.trace.begin(
      "round " + std::to_string(round_.number) + ": world size " +
          std::to_string(round_.world_size()),
      {{"nodes", std::to_string(round_.nodes.size())},
       {"group rank", std::to_string(round_.group_rank)},
       {"ranks", rank_range(first_rank_, round_.nproc_per_node)},
       {"restart", std::to_string(plan_.restart_count) + " of " + std::to_string(o_.max_restarts)},
       {"master", plan_.master.host + ":" + std::to_string(plan_.master.port)}});
}

// Until the workers are done and no claim of a first failure is pending.
bool RoundWatch::watching() { return !workers_.finished() || claim_pending(); }

// Sleeps in the workers' poll until the next look is due (or the blame of a
// failure settles), at most a monitor interval.
void RoundWatch::wait() {
  Milliseconds wait = std::clamp(until(next_look_), Milliseconds(0), o_.monitor_interval);
  if (failure_seen_at_ && phase_ != Phase::FailureTold)
    wait = std::clamp(until(*failure_seen_at_ + kCauseWindow), Milliseconds(0), wait);
  if (workers_.finished())
    std::this_thread::sleep_for(std::min(wait, Milliseconds(50)));
  else
    workers_.poll(wait);
}

// Which events are due, in order. A store request that fails is the store lost.
void RoundWatch::look() {
  if (phase_ == Phase::StoreLost) return;
  try {
    agent_.rendezvous.keep_alive();
    if (workers_.interrupted_by() != 0 && !leaving_told_) on_interrupt();
    // Which node's trouble came first is settled in the store at the first
    // sign of it here (a rank's error line comes before the rank exits).
    if (workers_.trouble_seen() && end_.first_node == 0 && may_claim()) on_trouble();
    if (workers_.failure_seen() && phase_ != Phase::FailureTold && !claim_pending() &&
        blame_settled())
      on_settled_failure();
    if (phase_ == Phase::Running && workers_.interrupted_by() == 0 && Clock::now() >= next_look_) {
      next_look_ = Clock::now() + o_.monitor_interval;
      if (const auto change = agent_.rendezvous.check(round_)) on_membership_change(*change);
    }
  } catch (const CommError& e) {
    on_store_lost(e.what());
  }
}

bool RoundWatch::on_this_node(int rank) const {
  return rank >= first_rank_ && rank < first_rank_ + round_.nproc_per_node;
}

// Our ranks learn of another node's failure through the transport ("rank 1:
// rank 3 failed or stopped answering") before its agent reaps the rank: a
// first error naming a rank of another node waits a while for that node's
// claim.
bool RoundWatch::may_claim() {
  const int named = workers_.first_error_names();
  if (named < 0 || on_this_node(named)) return true;
  if (!claim_after_)
    claim_after_ =
        Clock::now() + std::max<Milliseconds>(Milliseconds(1000), 2 * o_.monitor_interval);
  return Clock::now() >= *claim_after_;
}

bool RoundWatch::claim_pending() {
  return phase_ != Phase::StoreLost && workers_.trouble_seen() && end_.first_node == 0 &&
         workers_.interrupted_by() == 0 && !may_claim();
}

// What a local failure is blamed on settles once every local rank has ended
// or kCauseWindow has passed (blame.hpp): the rank that failed first is often
// reaped after the peers that failed because of it, and its own report read
// later. The other nodes are told only the settled cause.
bool RoundWatch::blame_settled() {
  if (!failure_seen_at_) failure_seen_at_ = Clock::now();
  return workers_.finished() || Clock::now() - *failure_seen_at_ >= kCauseWindow;
}

// ---- the events --------------------------------------------------------------------

void RoundWatch::on_interrupt() {
  // Tell the others before our workers stop (their peers would fail first
  // and blame each other).
  leaving_told_ = true;
  announce_leaving(agent_, workers_.interrupted_by());
}

void RoundWatch::on_trouble() {
  end_.first_node = agent_.ledger.claim_first_failure(round_.number);
}

void RoundWatch::on_settled_failure() {
  // Tell the other nodes now; our other workers get stop_after to fail by
  // themselves first (the supervisor does that).
  phase_ = Phase::FailureTold;
  const LaunchResult so_far = workers_.result();
  const std::string why = so_far.message.empty() ? "a worker failed" : so_far.message;
  if (end_.first_node == 0) on_trouble();
  if (end_.first_node != agent_.rendezvous.self().id) {
    const std::string last = agent_.rendezvous.last_change();
    const std::string first = "node " + std::to_string(end_.first_node);
    end_.elsewhere = last.rfind(first + " (", 0) == 0 ? last : first + " failed first";
  } else if (const auto departed = agent_.rendezvous.departure(round_)) {
    // No failure elsewhere, but a node left the round (stopped by its user):
    // ours follows from that.
    end_.elsewhere = *departed;
  }
  tell_others(end_.elsewhere.empty() ? why : "its workers failed after " + end_.elsewhere);
  agent_.trace.instant("worker failure", {{"what", why}});
}

void RoundWatch::tell_others(const std::string& told) {
  if (out_of_restarts())
    end_.closed_by_us = agent_.rendezvous.close(told + ", " + restarts_used_up(o_.max_restarts));
  else
    agent_.rendezvous.leave(told);
}

void RoundWatch::on_membership_change(const MembershipChange& change) {
  phase_ = Phase::Stopping;
  change_ = change;
  if (!change.closed && out_of_restarts())
    end_.closed_by_us =
        agent_.rendezvous.close(change.reason + ", " + restarts_used_up(o_.max_restarts));
  agent_.log.line((change.closed ? "the job ended: " : "") + change.reason +
                  ": stopping this node's workers (SIGTERM, then SIGKILL after " +
                  seconds_text(o_.workers.kill_after) + ")");
  agent_.trace.end();
  agent_.trace.begin("stopping", {{"reason", change.reason}});
  workers_.stop(change.reason, 1);
}

void RoundWatch::on_store_lost(const std::string& what) {
  phase_ = Phase::StoreLost;
  lost_store_ = what;
  workers_.stop("lost the rendezvous store", 1);
}

// ---- the end -----------------------------------------------------------------------

RoundEnd RoundWatch::end() {
  using Outcome = RoundEnd::Outcome;
  const LaunchResult result = workers_.result();
  if (workers_.interrupted_by() != 0) {
    end_.outcome = Outcome::Interrupted;
    end_.interrupted_by = workers_.interrupted_by();
  } else if (phase_ == Phase::FailureTold || (phase_ == Phase::Running && result.exit_code != 0)) {
    end_.outcome = Outcome::WorkersFailed;
    end_.round = round_.number;
    const std::string here = result.message.empty() ? "a worker failed" : result.message;
    end_.reason = end_.elsewhere.empty() ? here : end_.elsewhere + " (then here: " + here + ")";
    end_.exit_code = result.exit_code != 0 ? result.exit_code : 1;
    if (result.first_failure) record_failure(result);
  } else if (phase_ == Phase::Stopping) {
    end_.outcome = change_->closed ? Outcome::Closed : Outcome::MembershipChanged;
    end_.reason = change_->reason;
  } else {
    end_.outcome = Outcome::Succeeded;
  }
  return end_;
}

// This node's record of the failure, kept in the report and in the store
// (the node that ends the job shows the first failure's).
void RoundWatch::record_failure(const LaunchResult& result) {
  const NodeDesc& self = agent_.rendezvous.self();
  FailureRecord record = failure_record(*result.first_failure, round_.nproc_per_node);
  record.node = self.id;
  record.host = self.host;
  record.agent_pid = self.pid;
  record.round = round_.number;
  record.restart_count = plan_.restart_count;
  if (!plan_.log_root.empty()) {
    const auto file = std::filesystem::path(plan_.log_root) /
                      ("attempt_" + std::to_string(plan_.restart_count)) /
                      std::to_string(record.local_rank) / "error.json";
    if (std::filesystem::exists(file)) record.error_file = file.string();
  }
  end_.failure = record;
  try {
    agent_.ledger.record_failure(round_.number, to_json(record));
  } catch (const CommError&) {
    // The store is gone: the next look at it says so.
  }
}

}  // namespace

RoundEnd run_round(AgentParts& agent, const RoundPlan& plan) {
  return RoundWatch(agent, plan).run();
}

std::string restarts_used_up(int max_restarts) {
  if (max_restarts == 0) return "and --max-restarts is 0";
  if (max_restarts == 1) return "and the one restart of --max-restarts 1 is used up";
  return "and all " + std::to_string(max_restarts) + " restarts of --max-restarts " +
         std::to_string(max_restarts) + " are used up";
}

void announce_leaving(AgentParts& agent, int signal_number) {
  const std::string why = "its agent was interrupted by signal " + std::to_string(signal_number);
  try {
    if (agent.store.hosts())
      agent.rendezvous.close(describe(agent.rendezvous.self()) +
                             ", which hosts the rendezvous store, " + why);
    else
      agent.rendezvous.leave(why);
  } catch (const CommError&) {
    // The store is gone already: nothing to tell.
  }
}

std::string rank_range(int first, int count) {
  return count == 1 ? "rank " + std::to_string(first)
                    : "ranks " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

}  // namespace ringlab::launch
