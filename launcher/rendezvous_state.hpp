// The state of an elastic rendezvous, shared by the agents through the store
// as one JSON value that each agent changes with compare-and-set, the way
// torch's c10d backend holds its _RendezvousState
// (torch/distributed/elastic/rendezvous/dynamic_rendezvous.py):
//
//   round         the round being formed, or running once complete;
//   complete      the round is formed: its participants run the workers;
//   participants  the nodes of the round (once complete, in node-id order:
//                 group rank = position);
//   wait_list     nodes that arrived while a round was running and want in:
//                 the running agents see them and restart;
//   closed        the job is over (a node ran out of restarts, or stopped it);
//                 no round forms again.
//
// The transitions are pure functions here (tested without a store); the
// rendezvous (rendezvous.hpp) reads, applies and writes them.
//
// Unlike torch, deadlines and heartbeats are not clock times in the state:
// each agent times the last call on its own clock, and a heartbeat is a
// counter the node increments (rendezvous.hpp), so the nodes' clocks need
// not agree.
#pragma once

#include <string>
#include <vector>

namespace ringlab::launch {

struct NodeDesc {
  int id = 0;  // the order in which nodes first reached the store: 1, 2, ...
  std::string host;
  int pid = 0;             // its agent's process id
  std::string address;     // where its workers listen (MASTER_ADDR when it is group rank 0)
  int nproc_per_node = 0;  // its workers
  bool operator==(const NodeDesc&) const = default;
};

// "node 2 (host-b, pid 4711)"
std::string describe(const NodeDesc& node);

struct RendezvousState {
  long long round = 0;
  bool complete = false;
  bool closed = false;
  std::string closed_reason;  // why the job ended
  std::vector<NodeDesc> participants;
  std::vector<NodeDesc> wait_list;
  // Why the membership last changed ("node 2 left: rank 3 exited with status
  // 1"): the other agents print it when they restart.
  std::string last_change;
  bool operator==(const RendezvousState&) const = default;
};

std::string to_json(const RendezvousState& state);
// Throws std::runtime_error when text is not a state this version wrote.
RendezvousState state_from_json(const std::string& text);

bool is_participant(const RendezvousState& state, int node);
bool is_waiting(const RendezvousState& state, int node);

// What a joining node does next (torch's _RendezvousJoinOp).
enum class JoinAction {
  Closed,             // the job is over
  Done,               // the round is complete and we are in it
  AddToParticipants,  // a round is forming and we are not in it yet
  AddToWaitList,      // a round is running with room for us: ask for the next one
  MarkComplete,       // enough nodes are in and the last call is over
  Wait,               // for more nodes, the last call, or the running round to end
};
JoinAction next_join_action(const RendezvousState& state, int node, int min_nodes, int max_nodes,
                            bool last_call_over);

// Applies a join action for node (Closed, Done and Wait change nothing).
// AddToParticipants completes the round at once when it makes max_nodes.
void apply_join_action(RendezvousState& state, JoinAction action, const NodeDesc& node,
                       int max_nodes);

// Takes node out of the participants and the wait list (torch's exit op and
// its removal of dead nodes). When the last participant of a complete round
// leaves, the next round begins: round + 1, not complete. True if it was in.
bool remove_node(RendezvousState& state, int node);

// The group rank of node in a complete round, or -1.
int group_rank_of(const RendezvousState& state, int node);

}  // namespace ringlab::launch
