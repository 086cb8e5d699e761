#include "launcher/rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "launcher/launcher.hpp"
#include "store/store.hpp"

namespace ringlab::launch {

namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting agent looks at the state again.
constexpr Milliseconds kPoll{100};
// How often a waiting agent says what it waits for (at most; a third of the
// join timeout when that is shorter).
constexpr Milliseconds kProgressEvery{5000};

std::string node_list(const std::vector<NodeDesc>& nodes) {
  if (nodes.empty()) return "none";
  std::string text;
  for (const NodeDesc& node : nodes) text += (text.empty() ? "" : ", ") + describe(node);
  return text;
}

std::string hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// How often a waiting agent says what it waits for: kProgressEvery, or a
// third of the join timeout when that is shorter.
Milliseconds progress_interval(Milliseconds join_timeout) {
  return std::min(kProgressEvery, join_timeout / 3);
}

// The last call of the round this node is in runs on this agent's clock,
// from when it first saw enough nodes in.
class LastCall {
 public:
  bool over(const RendezvousState& state, int self, const ElasticOptions& options) {
    const bool enough = !state.complete && is_participant(state, self) &&
                        static_cast<int>(state.participants.size()) >= options.min_nodes;
    if (!enough || state.round != round_) running_ = false;
    if (enough && !running_) {
      running_ = true;
      since_ = Clock::now();
      round_ = state.round;
    }
    return running_ && Clock::now() - since_ >= options.rendezvous.last_call_timeout;
  }

 private:
  bool running_ = false;
  Clock::time_point since_{};
  long long round_ = -1;
};

}  // namespace

std::string local_address_towards(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
    return "127.0.0.1";
  std::string address = "127.0.0.1";
  for (addrinfo* a = found; a; a = a->ai_next) {
    // A UDP "connection" sends nothing: it only asks the kernel for the route.
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    char text[INET6_ADDRSTRLEN] = {};
    const bool ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
    ::close(fd);
    if (!ok) continue;
    const void* raw =
        local.ss_family == AF_INET6
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
    if (::inet_ntop(local.ss_family, raw, text, sizeof text)) {
      address = text;
      break;
    }
  }
  ::freeaddrinfo(found);
  return address;
}

Rendezvous::Rendezvous(const ElasticOptions& options, AgentStore& store, AgentLog& log,
                       AgentTrace& trace)
    : options_(options), store_(store), log_(log), trace_(trace) {}

// ---- joining the job -------------------------------------------------------------

void Rendezvous::join() {
  self_.id = static_cast<int>(store_.client().add(store_.key("nodes"), 1));
  self_.host = hostname();
  self_.pid = static_cast<int>(::getpid());
  self_.nproc_per_node = options_.workers.nproc_per_node;
  const char* bind = std::getenv("RINGLAB_BIND_ADDR");
  self_.address =
      bind && *bind ? bind : local_address_towards(options_.endpoint_host, options_.endpoint_port);
  require_token_beyond_loopback(options_, self_.address, "this node's workers would listen on");
  log_.set_node(self_.id);
}

// ---- the shared state --------------------------------------------------------------

RendezvousState Rendezvous::read_state() {
  return state_from_json(store_.client().get(store_.key("state")));
}

RendezvousState Rendezvous::update(const std::function<bool(RendezvousState&)>& change) {
  store::StoreClient& client = store_.client();
  const std::string key = store_.key("state");
  for (int attempt = 0;; ++attempt) {
    const std::string before = client.get(key);
    RendezvousState state = state_from_json(before);
    if (!change(state)) return state;
    const std::string after = to_json(state);
    if (client.compare_set(key, before, after) == after) return state;
    // Another agent wrote first: read its state and decide again.
    if (attempt == 1000)
      throw std::runtime_error("the rendezvous state at " + store_.endpoint() +
                               " changed 1000 times while this node tried to update it");
  }
}

void Rendezvous::keep_alive() {
  const auto now = Clock::now();
  if (now - last_beat_ < options_.rendezvous.keep_alive_interval) return;
  store_.client().add(store_.key("hb/" + std::to_string(self_.id)), 1);
  last_beat_ = now;
}

bool Rendezvous::heartbeat_lapsed(int node) {
  const long long beats = store_.client().add(store_.key("hb/" + std::to_string(node)), 0);
  Seen& seen = seen_[node];
  if (beats != seen.beats) seen = {beats, Clock::now()};
  return Clock::now() - seen.changed > options_.rendezvous.lapse();
}

std::string Rendezvous::drop_lapsed_nodes(RendezvousState& state) {
  std::vector<int> dead;
  for (const auto* nodes : {&state.participants, &state.wait_list})
    for (const NodeDesc& node : *nodes)
      if (node.id != self_.id && heartbeat_lapsed(node.id)) dead.push_back(node.id);
  if (dead.empty()) return "";
  std::string said;
  state = update([&](RendezvousState& s) {
    said.clear();
    for (const auto* nodes : {&s.participants, &s.wait_list})
      for (const NodeDesc& node : *nodes)
        if (std::find(dead.begin(), dead.end(), node.id) != dead.end())
          said += (said.empty() ? "" : "; ") + describe(node) +
                  " stopped sending heartbeats (none for " +
                  seconds_text(Clock::now() - seen_[node.id].changed) + ")";
    bool changed = false;
    for (int id : dead) changed = remove_node(s, id) || changed;
    if (changed) s.last_change = said;
    return changed;
  });
  return said;
}

// ---- rounds --------------------------------------------------------------------------

std::string Rendezvous::waiting_message(const RendezvousState& state,
                                        Clock::time_point started) const {
  const std::string waited = " (" + seconds_text(Clock::now() - started) + " of " +
                             seconds_text(options_.rendezvous.join_timeout) + ")";
  const int in = static_cast<int>(state.participants.size());
  if (state.complete) {
    if (is_waiting(state, self_.id))
      return "waiting for round " + std::to_string(state.round) + " (" +
             node_list(state.participants) + ") to stop, so that this node can join the next" +
             waited;
    return "round " + std::to_string(state.round) + " is full (" + std::to_string(in) +
           " nodes, --nnodes at most " + std::to_string(options_.max_nodes) +
           "): waiting for room" + waited;
  }
  if (in < options_.min_nodes)
    return "round " + std::to_string(state.round) + ": waiting for nodes: " + std::to_string(in) +
           " in (" + node_list(state.participants) + "), at least " +
           std::to_string(options_.min_nodes) + " needed" + waited;
  return "round " + std::to_string(state.round) + ": " + std::to_string(in) +
         " nodes in, last call: waiting up to " +
         seconds_text(options_.rendezvous.last_call_timeout) + " for more (at most " +
         std::to_string(options_.max_nodes) + ")" + waited;
}

Round Rendezvous::next_round(const std::function<bool()>& interrupted) {
  // torch's exit op: out of the round we were in (if the agent has not left it already).
  update([&](RendezvousState& s) { return remove_node(s, self_.id); });
  const auto started = Clock::now();
  auto next_progress = started + progress_interval(options_.rendezvous.join_timeout);
  LastCall last_call;
  for (;;) {
    if (interrupted()) {
      leave("its agent was interrupted");
      throw RendezvousInterrupted("interrupted while waiting for a round");
    }
    keep_alive();
    RendezvousState state = read_state();
    if (const std::string said = drop_lapsed_nodes(state); !said.empty()) {
      log_.line(said + ": taken out of the rendezvous");
      trace_.instant("node lost", {{"what", said}});
      continue;
    }
    const bool last_call_over = last_call.over(state, self_.id, options_);
    const JoinAction action =
        next_join_action(state, self_.id, options_.min_nodes, options_.max_nodes, last_call_over);
    if (action == JoinAction::Closed)
      throw RendezvousClosed(state.closed_reason.empty() ? "the job was closed"
                                                         : state.closed_reason);
    if (action == JoinAction::Done &&
        static_cast<int>(state.participants.size()) < options_.min_nodes) {
      // The round completed, but nodes left it before we looked, and too few
      // remain: it cannot run. Leave it too, so that the next one forms.
      update([&](RendezvousState& s) { return remove_node(s, self_.id); });
      continue;
    }
    if (action == JoinAction::Done) return round_of(state);
    if (action == JoinAction::Wait)
      wait_for_round(state, started, next_progress);
    else
      take_join_action(last_call_over);
  }
}

void Rendezvous::take_join_action(bool last_call_over) {
  update([&](RendezvousState& s) {
    const JoinAction now =
        next_join_action(s, self_.id, options_.min_nodes, options_.max_nodes, last_call_over);
    if (now == JoinAction::Closed || now == JoinAction::Done || now == JoinAction::Wait)
      return false;
    apply_join_action(s, now, self_, options_.max_nodes);
    if (now == JoinAction::AddToParticipants)
      s.last_change = describe(self_) + " joined round " + std::to_string(s.round);
    // (Its own reason for leaving, if it just left, says more.)
    if (now == JoinAction::AddToWaitList &&
        s.last_change.rfind(describe(self_) + " left: ", 0) != 0)
      s.last_change = describe(self_) + " wants to join";
    return true;
  });
}

Round Rendezvous::round_of(const RendezvousState& state) const {
  Round round;
  round.number = state.round;
  round.nodes = state.participants;
  round.group_rank = group_rank_of(state, self_.id);
  round.nproc_per_node = options_.workers.nproc_per_node;
  return round;
}

void Rendezvous::wait_for_round(const RendezvousState& state, Clock::time_point started,
                                Clock::time_point& next_progress) {
  const auto now = Clock::now();
  if (now >= started + options_.rendezvous.join_timeout) {
    leave("no round formed in time");
    throw std::runtime_error(
        "no round formed within " + seconds_text(options_.rendezvous.join_timeout) + " (" +
        std::to_string(state.participants.size()) +
        " node(s) in: " + node_list(state.participants) + "; --nnodes asks for at least " +
        std::to_string(options_.min_nodes) +
        "): start the other nodes with the same command, lower MIN in --nnodes MIN:MAX, or "
        "wait longer with --rdzv-conf join_timeout=SECONDS");
  }
  if (now >= next_progress) {
    log_.line(waiting_message(state, started));
    next_progress = now + progress_interval(options_.rendezvous.join_timeout);
  }
  std::this_thread::sleep_for(kPoll);
}

std::optional<Endpoint> Rendezvous::master_of(const Round& round, const std::string& master_addr,
                                              int master_port,
                                              const std::function<bool()>& interrupted) {
  store::StoreClient& client = store_.client();
  const std::string master_key = store_.key("round/" + std::to_string(round.number) + "/master");
  if (round.group_rank == 0) {
    Endpoint master{master_addr.empty() ? self_.address : master_addr, master_port};
    if (master.port == 0) {
      // Held until the next round's pick: the workers' rank 0 binds it soon.
      master_reservation_ = std::make_unique<PortReservation>(master.host);
      master.port = master_reservation_->port();
    }
    client.set(master_key, master.host + ":" + std::to_string(master.port));
    return master;
  }
  const auto deadline = Clock::now() + options_.rendezvous.read_timeout;
  for (;;) {
    if (client.check({master_key})) {
      const std::string value = client.get(master_key);
      const std::size_t colon = value.rfind(':');
      return Endpoint{value.substr(0, colon), std::atoi(value.c_str() + colon + 1)};
    }
    if (interrupted()) return std::nullopt;
    keep_alive();
    RendezvousState state = read_state();
    if (const std::string said = drop_lapsed_nodes(state); !said.empty())
      log_.line(said + ": taken out of the rendezvous");
    if (state.closed || state.round != round.number || !is_participant(state, self_.id))
      return std::nullopt;
    if (Clock::now() >= deadline)
      throw std::runtime_error(describe(round.nodes.front()) + ", group rank 0 of round " +
                               std::to_string(round.number) +
                               ", did not publish its workers' address within " +
                               seconds_text(options_.rendezvous.read_timeout));
    std::this_thread::sleep_for(kPoll / 2);
  }
}

std::optional<MembershipChange> Rendezvous::check(const Round& round) {
  RendezvousState state = read_state();
  if (const std::string said = drop_lapsed_nodes(state); !said.empty())
    return MembershipChange{false, said};
  if (state.closed) return MembershipChange{true, state.closed_reason};
  const auto same_nodes = [&] {
    if (state.participants.size() != round.nodes.size()) return false;
    for (std::size_t i = 0; i < round.nodes.size(); ++i)
      if (state.participants[i].id != round.nodes[i].id) return false;
    return true;
  };
  if (state.round != round.number || !is_participant(state, self_.id) || !same_nodes())
    return MembershipChange{false,
                            state.last_change.empty() ? "the group re-forms" : state.last_change};
  if (!state.wait_list.empty())
    return MembershipChange{false, describe(state.wait_list.front()) + " wants to join"};
  return std::nullopt;
}

void Rendezvous::leave(const std::string& why) {
  update([&](RendezvousState& s) {
    if (!remove_node(s, self_.id)) return false;
    s.last_change = describe(self_) + " left: " + why;
    return true;
  });
}

bool Rendezvous::close(const std::string& reason) {
  bool closed_here = false;
  update([&](RendezvousState& s) {
    closed_here = !s.closed;
    if (s.closed) return false;
    s.closed = true;
    s.closed_reason = reason;
    return true;
  });
  return closed_here;
}

bool Rendezvous::closed() { return read_state().closed; }

std::string Rendezvous::last_change() { return read_state().last_change; }

std::optional<std::string> Rendezvous::departure(const Round& round) {
  const RendezvousState state = read_state();
  const bool someone_left =
      state.round != round.number ||
      std::any_of(round.nodes.begin(), round.nodes.end(), [&](const NodeDesc& node) {
        return node.id != self_.id && !is_participant(state, node.id);
      });
  if (!someone_left || state.last_change.empty()) return std::nullopt;
  return state.last_change;
}

}  // namespace ringlab::launch
