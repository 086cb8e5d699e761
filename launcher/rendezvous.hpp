// The elastic rendezvous of `ringlab run`, like torch's c10d dynamic
// rendezvous, over ringlab's rendezvous store (store/store.hpp):
//
//  - The agent that can bind the endpoint hosts the store; the others reach
//    it there (--rdzv-conf is_host=true/false decides instead).
//  - The first agent to reach the store names the run (--rdzv-id) and the
//    job's shape (--nproc-per-node, --nnodes); an agent that differs is
//    refused with what to change.
//  - Agents join rounds through the shared state (rendezvous_state.hpp). A
//    round closes when MIN nodes are in and the last call is over, or at
//    once when MAX are. Group ranks follow the order in which the nodes
//    first reached the store.
//  - Each agent increments its heartbeat counter every keep_alive_interval.
//    Another agent that sees a counter stand still for keep_alive_interval x
//    keep_alive_max_attempt (on its own clock) takes that node out of the
//    state: the survivors re-form without it.
//
// Keys live under ringlab/elastic/<run id>/ (state, config, nodes, hb/<id>,
// round/<n>/master, round/<n>/finished, failure, outcome, bye/<id>).
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

#include "launcher/agent_trace.hpp"
#include "launcher/elastic_options.hpp"
#include "launcher/rendezvous_state.hpp"

namespace ringlab::store {
class Store;
class StoreServer;
}  // namespace ringlab::store

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
  Rendezvous(const ElasticOptions& options, AgentLog& log, AgentTrace& trace);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // Hosts the store at the endpoint or reaches it there, checks the run id
  // and this node's shape against the job's, and takes a node id. Throws
  // std::runtime_error saying what is wrong and what to do.
  void connect();
  const NodeDesc& self() const { return self_; }
  bool hosts_store() const { return server_ != nullptr; }
  std::string endpoint() const;

  // Sends a heartbeat when one is due. Call at least every keep_alive_interval.
  void keep_alive();

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

  // The first node to see a failure in a round claims it (compare-and-set:
  // no clocks involved). Returns the node that did: this one or an earlier.
  int claim_first_failure(long long round);
  // This node's failure record of a round (JSON), and another node's, waited
  // for up to timeout.
  void record_failure(long long round, const std::string& record);
  std::optional<std::string> failure_of(long long round, int node, Milliseconds timeout);
  // Why the membership last changed ("node 2 (...) left: rank 3 exited ...").
  std::string last_change();
  // When a node of the round has left it already: why (the last change).
  std::optional<std::string> departure(const Round& round);

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
  std::string key(const std::string& name) const { return prefix_ + name; }
  RendezvousState read_state();
  // Reads, changes with change(state) (false: nothing to write) and writes
  // back with compare-and-set, retrying on a race. Returns the state after.
  RendezvousState update(const std::function<bool(RendezvousState&)>& change);
  // Reads the heartbeat counters of the nodes in state; takes those that
  // lapsed out of it. Returns what was said about them ("" if none).
  std::string drop_lapsed_nodes(RendezvousState& state);
  void observe(int node);
  bool lapsed(int node) const;
  void host_or_join_store();
  void check_job(const std::string& store_address);
  std::string waiting_message(const RendezvousState& state,
                              std::chrono::steady_clock::time_point started) const;

  using Clock = std::chrono::steady_clock;
  const ElasticOptions& options_;
  AgentLog& log_;
  AgentTrace& trace_;
  std::string prefix_;
  NodeDesc self_;
  std::unique_ptr<store::StoreServer> server_;
  // The port group rank 0 picked for this round's workers (master_of).
  std::unique_ptr<PortReservation> master_reservation_;
  std::unique_ptr<store::Store> store_;
  Clock::time_point last_beat_{};
  struct Seen {
    long long beats = -1;
    Clock::time_point changed;
  };
  std::map<int, Seen> seen_;  // heartbeat counters of the other nodes
};

}  // namespace ringlab::launch
