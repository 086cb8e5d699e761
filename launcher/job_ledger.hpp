// What the elastic agents leave each other in the store about how the job
// ends, next to the rounds (rendezvous.hpp), over the same store
// (agent_store.hpp):
//
//  - which node's failure came first in a round (compare-and-set: no clocks
//    involved), and each node's failure record;
//  - the job's outcome, which every node prints the same way;
//  - the exit barrier: every node's workers finished;
//  - each node's goodbye, with its trace lane, for the node that hosts the
//    store and stays until the others have read the end of the job.
//
// Keys (under the store's prefix): failure/<round>/first,
// failure/<round>/node<id>, outcome, round/<n>/finished, bye/<id>.
// While it waits, a node keeps sending its heartbeats.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/agent_store.hpp"
#include "launcher/rendezvous.hpp"

namespace ringlab::launch {

class JobLedger {
 public:
  JobLedger(AgentStore& store, Rendezvous& rendezvous) : store_(store), rendezvous_(rendezvous) {}

  // The first node to see a failure in a round claims it. Returns the node
  // that did: this one or an earlier.
  int claim_first_failure(long long round);
  // This node's failure record of a round (JSON), and another node's, waited
  // for up to timeout.
  void record_failure(long long round, const std::string& record);
  std::optional<std::string> failure_of(long long round, int node, Milliseconds timeout);

  // The job's outcome (a JSON text): the first one set stays.
  void set_outcome(const std::string& outcome);
  // Waits up to `timeout` for it; nothing if none came.
  std::optional<std::string> outcome(Milliseconds timeout);

  // After this node's workers succeeded: waits until every node of the round
  // has, up to timeout (false: the time ran out or the job was closed).
  bool wait_finished(const Round& round, Milliseconds timeout);

  // This node's last word: its trace lane (may be empty).
  void say_goodbye(const std::string& trace_lane);
  // On the host: waits until every other node has said goodbye, or its
  // heartbeat lapsed, or timeout; returns their trace lanes.
  std::vector<std::string> wait_for_goodbyes(Milliseconds timeout);

 private:
  // Waits up to timeout for key to exist; its value, or nothing.
  std::optional<std::string> wait_for(const std::string& key, Milliseconds timeout);

  AgentStore& store_;
  Rendezvous& rendezvous_;
};

}  // namespace ringlab::launch
