// The rounds of the elastic rendezvous of `ringlab run`, like torch's c10d
// dynamic rendezvous, and the agents' heartbeats, over the agents' store
// (agent_store.hpp):
//
//  - Agents join rounds through the shared state (rendezvous_state.hpp). A
//    round closes when MIN nodes are in and the last call is over, or at
//    once when MAX are. Group ranks follow the order in which the nodes
//    first reached the store.
//  - Each agent increments its heartbeat counter every keep_alive_interval.
//    Another agent that sees a counter stand still for keep_alive_interval x
//    keep_alive_max_attempt (on its own clock) takes that node out of the
//    state: the survivors re-form without it.
//
// Keys (under the store's prefix): state, nodes, hb/<id>, round/<n>/master.
// The failures, the outcome and the goodbyes are job_ledger.hpp's.
//
// Every store request can throw ringlab::CommError when the store is gone
// (its host ended): the agent reports that the job is lost.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "launcher/agent_store.hpp"
#include "launcher/agent_trace.hpp"
#include "launcher/elastic_options.hpp"
#include "launcher/rendezvous_state.hpp"

namespace ringlab::launch {

// The job is over (another node closed it): the reason says why.
class RendezvousClosed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The agent received SIGINT/SIGTERM while it waited.
class RendezvousInterrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A complete round, as this node sees it.
struct Round {
  long long number = 0;
  std::vector<NodeDesc> nodes;  // by group rank
  int group_rank = -1;
  int nproc_per_node = 0;
  int world_size() const { return static_cast<int>(nodes.size()) * nproc_per_node; }
};

// Something that ends the running round.
struct MembershipChange {
  bool closed = false;  // the job is over
  std::string reason;
};

// The local address this machine uses to reach host:port (where its workers
// can be reached by the other nodes); 127.0.0.1 when that cannot be told.
std::string local_address_towards(const std::string& host, int port);

class Rendezvous {
 public:
  Rendezvous(const ElasticOptions& options, AgentStore& store, AgentLog& log, AgentTrace& trace);
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // Takes a node id in the job (the store is connected) and finds where this
  // node's workers listen. Throws std::invalid_argument when an open job
  // would listen beyond loopback.
  void join();
  const NodeDesc& self() const { return self_; }

  // Sends a heartbeat when one is due. Call at least every keep_alive_interval.
  void keep_alive();
  // Looks at node's heartbeat counter: true once it has stood still for the
  // lapse, on this agent's clock.
  bool heartbeat_lapsed(int node);

  // Leaves the round this node is in, if any, and joins the next; returns
  // once it is complete. Asks `interrupted` between polls (then leaves and
  // throws RendezvousInterrupted). Throws RendezvousClosed when the job is
  // over, std::runtime_error when no round forms within join_timeout.
  Round next_round(const std::function<bool()>& interrupted);

  // The master address of a round's workers: group rank 0 picks it (the
  // given one, or its own address and a free port) and publishes it; the
  // others wait for it. Nothing when the round ended meanwhile.
  std::optional<Endpoint> master_of(const Round& round, const std::string& master_addr,
                                    int master_port, const std::function<bool()>& interrupted);

  // One look at the shared state while the workers run: a node whose
  // heartbeat lapsed (taken out of the state here), a node that left, one
  // that waits to join, another round, or the end of the job.
  std::optional<MembershipChange> check(const Round& round);

  // Leaves the round (the others see it and restart) or the wait list.
  void leave(const std::string& why);
  // Ends the job for every node. False when another node had already ended it.
  bool close(const std::string& reason);
  bool closed();
  // Why the membership last changed ("node 2 (...) left: rank 3 exited ...").
  std::string last_change();
  // When a node of the round has left it already: why (the last change).
  std::optional<std::string> departure(const Round& round);

 private:
  RendezvousState read_state();
  // Reads, changes with change(state) (false: nothing to write) and writes
  // back with compare-and-set, retrying on a race. Returns the state after.
  RendezvousState update(const std::function<bool(RendezvousState&)>& change);
  // Reads the heartbeat counters of the nodes in state; takes those that
  // lapsed out of it. Returns what was said about them ("" if none).
  std::string drop_lapsed_nodes(RendezvousState& state);
  // next_round's steps: one join action, and one wait (throws past the join timeout).
  void take_join_action(bool last_call_over);
  Round round_of(const RendezvousState& state) const;
  using Clock = std::chrono::steady_clock;
  void wait_for_round(const RendezvousState& state, Clock::time_point started,
                      Clock::time_point& next_progress);
  std::string waiting_message(const RendezvousState& state, Clock::time_point started) const;

  const ElasticOptions& options_;
  AgentStore& store_;
  AgentLog& log_;
  AgentTrace& trace_;
  NodeDesc self_;
  // The port group rank 0 picked for this round's workers (master_of).
  std::unique_ptr<PortReservation> master_reservation_;
  Clock::time_point last_beat_{};
  struct Seen {
    long long beats = -1;
    Clock::time_point changed;
  };
  std::map<int, Seen> seen_;  // heartbeat counters of the other nodes
};

}  // namespace ringlab::launch
