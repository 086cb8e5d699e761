#include "launcher/rendezvous_state.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ringlab::launch {

namespace {

// Bumped when the layout changes, so that agents of different versions do not
// misread each other.
constexpr int kStateVersion = 1;

nlohmann::json node_json(const NodeDesc& node) {
  return {{"id", node.id},
          {"host", node.host},
          {"pid", node.pid},
          {"address", node.address},
          {"nproc_per_node", node.nproc_per_node}};
}

NodeDesc node_from(const nlohmann::json& j) {
  return {j.at("id").get<int>(), j.at("host").get<std::string>(), j.at("pid").get<int>(),
          j.at("address").get<std::string>(), j.at("nproc_per_node").get<int>()};
}

bool contains(const std::vector<NodeDesc>& nodes, int id) {
  return std::any_of(nodes.begin(), nodes.end(), [&](const NodeDesc& n) { return n.id == id; });
}

}  // namespace

std::string describe(const NodeDesc& node) {
  return "node " + std::to_string(node.id) + " (" + node.host + ", pid " +
         std::to_string(node.pid) + ")";
}

std::string to_json(const RendezvousState& state) {
  nlohmann::json participants = nlohmann::json::array(), waiting = nlohmann::json::array();
  for (const NodeDesc& node : state.participants) participants.push_back(node_json(node));
  for (const NodeDesc& node : state.wait_list) waiting.push_back(node_json(node));
  return nlohmann::json{{"version", kStateVersion},
                        {"round", state.round},
                        {"complete", state.complete},
                        {"closed", state.closed},
                        {"closed_reason", state.closed_reason},
                        {"participants", participants},
                        {"wait_list", waiting},
                        {"last_change", state.last_change}}
      .dump();
}

RendezvousState state_from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("version").get<int>() != kStateVersion)
      throw std::runtime_error("it was written by another version of ringlab (state version " +
                               std::to_string(j.at("version").get<int>()) + ", this one reads " +
                               std::to_string(kStateVersion) + ")");
    RendezvousState state;
    state.round = j.at("round").get<long long>();
    state.complete = j.at("complete").get<bool>();
    state.closed = j.at("closed").get<bool>();
    state.closed_reason = j.at("closed_reason").get<std::string>();
    for (const auto& node : j.at("participants")) state.participants.push_back(node_from(node));
    for (const auto& node : j.at("wait_list")) state.wait_list.push_back(node_from(node));
    state.last_change = j.at("last_change").get<std::string>();
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("the rendezvous state in the store is corrupt: ") +
                             e.what());
  }
}

bool is_participant(const RendezvousState& state, int node) {
  return contains(state.participants, node);
}

bool is_waiting(const RendezvousState& state, int node) { return contains(state.wait_list, node); }

JoinAction next_join_action(const RendezvousState& state, int node, int min_nodes, int max_nodes,
                            bool last_call_over) {
  if (state.closed) return JoinAction::Closed;
  const bool participant = is_participant(state, node);
  const int count = static_cast<int>(state.participants.size());
  if (state.complete) {
    if (participant) return JoinAction::Done;
    if (count < max_nodes && !is_waiting(state, node)) return JoinAction::AddToWaitList;
    return JoinAction::Wait;
  }
  if (!participant) return JoinAction::AddToParticipants;
  if (count >= min_nodes && last_call_over) return JoinAction::MarkComplete;
  return JoinAction::Wait;
}

void apply_join_action(RendezvousState& state, JoinAction action, const NodeDesc& node,
                       int max_nodes) {
  const auto complete = [&] {
    state.complete = true;
    std::sort(state.participants.begin(), state.participants.end(),
              [](const NodeDesc& a, const NodeDesc& b) { return a.id < b.id; });
  };
  switch (action) {
    case JoinAction::AddToParticipants:
      std::erase_if(state.wait_list, [&](const NodeDesc& n) { return n.id == node.id; });
      state.participants.push_back(node);
      if (static_cast<int>(state.participants.size()) >= max_nodes) complete();
      return;
    case JoinAction::AddToWaitList:
      state.wait_list.push_back(node);
      return;
    case JoinAction::MarkComplete:
      complete();
      return;
    case JoinAction::Closed:
    case JoinAction::Done:
    case JoinAction::Wait:
      return;
  }
}

bool remove_node(RendezvousState& state, int node) {
  const auto match = [&](const NodeDesc& n) { return n.id == node; };
  const bool was_participant = std::erase_if(state.participants, match) > 0;
  const bool was_waiting = std::erase_if(state.wait_list, match) > 0;
  if (was_participant && state.complete && state.participants.empty()) {
    state.complete = false;
    ++state.round;
  }
  return was_participant || was_waiting;
}

int group_rank_of(const RendezvousState& state, int node) {
  if (!state.complete) return -1;
  for (std::size_t i = 0; i < state.participants.size(); ++i)
    if (state.participants[i].id == node) return static_cast<int>(i);
  return -1;
}

}  // namespace ringlab::launch
