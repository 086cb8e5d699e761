// One round of an elastic agent (elastic_agent.hpp): this node's workers,
// started with the round's ranks and watched until they end, as a state
// machine (elastic_round.cpp) with one method per event:
//
//   trouble          a rank reported an error or failed: claim, in the store,
//                    that this node's trouble came first (unless it names a
//                    rank of another node, whose claim it waits for a while);
//   settled failure  the blame settled (blame.hpp): tell the other nodes
//                    (leave the round, or end the job past --max-restarts);
//   membership       a node joined, left or lapsed, or the job ended: stop
//                    this node's workers;
//   store lost       the store's host ended: stop the workers, ask no more;
//   interrupt        SIGINT/SIGTERM: tell the other nodes before the workers
//                    stop, so that their peers do not blame each other.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "launcher/agent_store.hpp"
#include "launcher/agent_trace.hpp"
#include "launcher/elastic_options.hpp"
#include "launcher/job_ledger.hpp"
#include "launcher/job_summary.hpp"
#include "launcher/rendezvous.hpp"
#include "launcher/signal_pipe.hpp"

namespace ringlab::launch {

// The parts of an agent that its rounds use.
struct AgentParts {
  const ElasticOptions& options;
  AgentLog& log;
  AgentTrace& trace;
  SignalPipe& signals;
  AgentStore& store;
  Rendezvous& rendezvous;
  JobLedger& ledger;
};

// What a round is run with besides the agent's parts.
struct RoundPlan {
  const Round& round;
  Endpoint master;
  int restart_count = 0;
  std::string log_root;  // "": no log files
};

// How a round ended.
struct RoundEnd {
  enum class Outcome { Succeeded, WorkersFailed, MembershipChanged, Closed, Interrupted };
  Outcome outcome = Outcome::Succeeded;
  std::string reason;
  int exit_code = 0;
  int interrupted_by = 0;  // Interrupted: the signal
  std::optional<FailureRecord> failure;
  bool closed_by_us = false;  // we ended the job (out of restarts)
  long long round = 0;
  // The node whose failure came first in this round, and what is known of
  // it here when that is another node (ours then followed from it).
  int first_node = 0;
  std::string elsewhere;
};

// The store went away under a running round.
class StoreLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs one round to its end. Throws StoreLost when the store is lost (the
// workers are stopped first).
RoundEnd run_round(AgentParts& agent, const RoundPlan& plan);

// "and all 3 restarts of --max-restarts 3 are used up"
std::string restarts_used_up(int max_restarts);
// Tells the other nodes that this one leaves, interrupted by signal_number
// (the host's leaving ends the job). Quiet when the store is gone.
void announce_leaving(AgentParts& agent, int signal_number);
// "rank 3", "ranks 4-7"
std::string rank_range(int first, int count);

}  // namespace ringlab::launch
