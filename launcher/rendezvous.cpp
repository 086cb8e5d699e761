#include "launcher/rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "launcher/token_maker.hpp"
#include "store/store.hpp"

namespace ringlab::launch {

namespace {

// The agents' store is the job's: it takes the token every node is given
// (RINGLAB_JOB_TOKEN), which the workers inherit. Without one it is open, as
// the workers' stores are on loopback (transport/tcp/rendezvous.cpp says so).
std::string shared_job_token() {
  const char* token = std::getenv(kJobTokenVariable);
  return token ? token : "";
}

bool is_loopback(const std::string& address) {
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return address == "localhost";
}

// A job open to other machines must be private to its members: the workers
// refuse to bind beyond loopback without a token (transport/tcp), so say it
// once here, before any round starts.
void require_token_beyond_loopback(const std::string& address, const std::string& what) {
  if (!shared_job_token().empty() || is_loopback(address)) return;
  throw std::invalid_argument(
      what + " " + address +
      " is reachable from other machines, and this job has no token: "
      "export the same RINGLAB_JOB_TOKEN=<secret> on every node (e.g. $(openssl rand -hex 32)) "
      "before ringlab run, or keep the job on loopback (127.0.0.1)");
}

using Clock = std::chrono::steady_clock;

// How often a waiting agent looks at the state again.
constexpr Milliseconds kPoll{100};
// How often a waiting agent says what it waits for (at most; a third of the
// join timeout when that is shorter).
constexpr Milliseconds kProgressEvery{5000};

std::string seconds_text(Clock::duration d) {
  const long long tenths = std::chrono::duration_cast<Milliseconds>(d).count() / 100;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") +
         " s";
}

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

// "could not reach ... (last error: Connection refused)" -> "Connection refused"
std::string last_error_of(const std::string& what) {
  const std::string marker = "(last error: ";
  const std::size_t at = what.find(marker);
  if (at == std::string::npos) return what;
  std::string rest = what.substr(at + marker.size());
  if (!rest.empty() && rest.back() == ')') rest.pop_back();
  return rest;
}

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

Rendezvous::Rendezvous(const ElasticOptions& options, AgentLog& log, AgentTrace& trace)
    : options_(options), log_(log), trace_(trace) {
  prefix_ = "ringlab/elastic/" + options.run_id + "/";
}

Rendezvous::~Rendezvous() {
  store_.reset();  // the client goes before the server it talks to
  server_.reset();
}

std::string Rendezvous::endpoint() const {
  return options_.endpoint_host + ":" + std::to_string(options_.endpoint_port);
}

// ---- joining the job -------------------------------------------------------------

void Rendezvous::connect() {
  host_or_join_store();
  check_job(endpoint());
  self_.id = static_cast<int>(store_->add(key("nodes"), 1));
  self_.host = hostname();
  self_.pid = static_cast<int>(::getpid());
  self_.nproc_per_node = options_.workers.nproc_per_node;
  const char* bind = std::getenv("RINGLAB_BIND_ADDR");
  self_.address =
      bind && *bind ? bind : local_address_towards(options_.endpoint_host, options_.endpoint_port);
  require_token_beyond_loopback(self_.address, "this node's workers would listen on");
  log_.set_node(self_.id);
}

void Rendezvous::host_or_join_store() {
  const RendezvousConfig& config = options_.rendezvous;
  if (config.is_host.value_or(true)) {
    try {
      server_ = std::make_unique<store::StoreServer>(options_.endpoint_host, options_.endpoint_port,
                                                     std::chrono::seconds(5), store::StoreLimits{},
                                                     shared_job_token());
    } catch (const std::exception& e) {
      if (config.is_host.value_or(false))
        throw std::runtime_error(
            "this node was told to host the rendezvous store (--rdzv-conf "
            "is_host=true) but cannot: " +
            std::string(e.what()));
      // The address is not ours, or another agent on this machine hosts the store.
    }
  }
  if (server_)
    require_token_beyond_loopback(options_.endpoint_host, "the rendezvous store hosted at");
  try {
    store_ = std::make_unique<store::Store>(options_.endpoint_host, options_.endpoint_port,
                                            config.read_timeout, shared_job_token());
  } catch (const std::exception& e) {
    throw std::runtime_error(
        "cannot reach the rendezvous store at " + endpoint() + " within " +
        seconds_text(config.read_timeout) + " (" + last_error_of(e.what()) +
        "): start the first node with the same --rdzv-endpoint (the node that owns that address "
        "hosts the store), check the address and port, or wait longer with --rdzv-conf "
        "read_timeout=SECONDS");
  }
}

void Rendezvous::check_job(const std::string& store_address) {
  const std::string run = store_->compare_set("ringlab/elastic/run", "", options_.run_id);
  if (run != options_.run_id)
    throw std::runtime_error("the rendezvous store at " + store_address + " serves run '" + run +
                             "', but this node was started with --rdzv-id " + options_.run_id +
                             ": give every node the same --rdzv-id (or use another "
                             "--rdzv-endpoint for another job)");
  const nlohmann::json mine = {{"nproc_per_node", options_.workers.nproc_per_node},
                               {"min_nodes", options_.min_nodes},
                               {"max_nodes", options_.max_nodes}};
  const std::string stored = store_->compare_set(key("config"), "", mine.dump());
  const nlohmann::json job = nlohmann::json::parse(stored, nullptr, false);
  if (!job.is_object() || !job.contains("nproc_per_node"))
    throw std::runtime_error("the rendezvous store at " + store_address +
                             " holds a job description this version of ringlab cannot read");
  if (job["nproc_per_node"] != mine["nproc_per_node"])
    throw std::runtime_error("this node has --nproc-per-node " + mine["nproc_per_node"].dump() +
                             ", but the nodes of run '" + options_.run_id + "' have " +
                             job["nproc_per_node"].dump() +
                             ": give every node the same --nproc-per-node");
  if (job["min_nodes"] != mine["min_nodes"] || job["max_nodes"] != mine["max_nodes"])
    throw std::runtime_error("this node has --nnodes " + mine["min_nodes"].dump() + ":" +
                             mine["max_nodes"].dump() + ", but run '" + options_.run_id +
                             "' was started with --nnodes " + job["min_nodes"].dump() + ":" +
                             job["max_nodes"].dump() + ": give every node the same --nnodes");
  store_->compare_set(key("state"), "", to_json(RendezvousState{}));
}

// ---- the shared state --------------------------------------------------------------

RendezvousState Rendezvous::read_state() { return state_from_json(store_->get(key("state"))); }

RendezvousState Rendezvous::update(const std::function<bool(RendezvousState&)>& change) {
  for (int attempt = 0;; ++attempt) {
    const std::string before = store_->get(key("state"));
    RendezvousState state = state_from_json(before);
    if (!change(state)) return state;
    const std::string after = to_json(state);
    if (store_->compare_set(key("state"), before, after) == after) return state;
    // Another agent wrote first: read its state and decide again.
    if (attempt == 1000)
      throw std::runtime_error("the rendezvous state at " + endpoint() +
                               " changed 1000 times while this node tried to update it");
  }
}

void Rendezvous::keep_alive() {
  const auto now = Clock::now();
  if (now - last_beat_ < options_.rendezvous.keep_alive_interval) return;
  store_->add(key("hb/" + std::to_string(self_.id)), 1);
  last_beat_ = now;
}

void Rendezvous::observe(int node) {
  const long long beats = store_->add(key("hb/" + std::to_string(node)), 0);
  Seen& seen = seen_[node];
  if (beats != seen.beats) seen = {beats, Clock::now()};
}

bool Rendezvous::lapsed(int node) const {
  const auto it = seen_.find(node);
  return it != seen_.end() && Clock::now() - it->second.changed > options_.rendezvous.lapse();
}

std::string Rendezvous::drop_lapsed_nodes(RendezvousState& state) {
  std::vector<int> dead;
  for (const auto* nodes : {&state.participants, &state.wait_list})
    for (const NodeDesc& node : *nodes) {
      if (node.id == self_.id) continue;
      observe(node.id);
      if (lapsed(node.id)) dead.push_back(node.id);
    }
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
  const auto deadline = started + options_.rendezvous.join_timeout;
  const Milliseconds progress_every =
      std::min(kProgressEvery, options_.rendezvous.join_timeout / 3);
  auto next_progress = started + progress_every;
  // The last call runs on our clock from when we first saw enough nodes in.
  bool last_call_running = false;
  Clock::time_point last_call_since{};
  long long last_call_round = -1;
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

    const bool enough = !state.complete && is_participant(state, self_.id) &&
                        static_cast<int>(state.participants.size()) >= options_.min_nodes;
    if (!enough || state.round != last_call_round) last_call_running = false;
    if (enough && !last_call_running) {
      last_call_running = true;
      last_call_since = Clock::now();
      last_call_round = state.round;
    }
    const bool last_call_over = last_call_running && Clock::now() - last_call_since >=
                                                         options_.rendezvous.last_call_timeout;
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
    if (action == JoinAction::Done) {
      Round round;
      round.number = state.round;
      round.nodes = state.participants;
      round.group_rank = group_rank_of(state, self_.id);
      round.nproc_per_node = options_.workers.nproc_per_node;
      return round;
    }
    if (action != JoinAction::Wait) {
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
      continue;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
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
      next_progress = now + progress_every;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

std::optional<Endpoint> Rendezvous::master_of(const Round& round, const std::string& master_addr,
                                              int master_port,
                                              const std::function<bool()>& interrupted) {
  const std::string master_key = key("round/" + std::to_string(round.number) + "/master");
  if (round.group_rank == 0) {
    Endpoint master{master_addr.empty() ? self_.address : master_addr, master_port};
    if (master.port == 0) {
      // Held until the next round's pick: the workers' rank 0 binds it soon.
      master_reservation_ = std::make_unique<PortReservation>(master.host);
      master.port = master_reservation_->port();
    }
    store_->set(master_key, master.host + ":" + std::to_string(master.port));
    return master;
  }
  const auto deadline = Clock::now() + options_.rendezvous.read_timeout;
  for (;;) {
    if (store_->check({master_key})) {
      const std::string value = store_->get(master_key);
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

// ---- failures and the end ---------------------------------------------------------------

int Rendezvous::claim_first_failure(long long round) {
  const std::string first = store_->compare_set(key("failure/" + std::to_string(round) + "/first"),
                                                "", std::to_string(self_.id));
  return std::atoi(first.c_str());
}

void Rendezvous::record_failure(long long round, const std::string& record) {
  store_->set(key("failure/" + std::to_string(round) + "/node" + std::to_string(self_.id)), record);
}

std::optional<std::string> Rendezvous::failure_of(long long round, int node, Milliseconds timeout) {
  const std::string record =
      key("failure/" + std::to_string(round) + "/node" + std::to_string(node));
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (store_->check({record})) return store_->get(record);
    if (Clock::now() >= deadline) return std::nullopt;
    keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
}

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

void Rendezvous::set_outcome(const std::string& outcome) {
  store_->compare_set(key("outcome"), "", outcome);
}

std::optional<std::string> Rendezvous::outcome(Milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (store_->check({key("outcome")})) return store_->get(key("outcome"));
    if (Clock::now() >= deadline) return std::nullopt;
    keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
}

bool Rendezvous::wait_finished(const Round& round, Milliseconds timeout) {
  const std::string finished = key("round/" + std::to_string(round.number) + "/finished");
  store_->add(finished, 1);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (store_->add(finished, 0) >= static_cast<long long>(round.nodes.size())) return true;
    if (Clock::now() >= deadline || read_state().closed) return false;
    keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
}

void Rendezvous::say_goodbye(const std::string& trace_lane) {
  store_->set(key("bye/" + std::to_string(self_.id)), trace_lane);
}

std::vector<std::string> Rendezvous::wait_for_goodbyes(Milliseconds timeout) {
  const int nodes = static_cast<int>(store_->add(key("nodes"), 0));
  const auto deadline = Clock::now() + timeout;
  std::vector<int> said;
  for (;;) {
    said.clear();
    bool pending = false;
    for (int node = 1; node <= nodes; ++node) {
      if (node == self_.id) continue;
      if (store_->check({key("bye/" + std::to_string(node))})) {
        said.push_back(node);
        continue;
      }
      observe(node);
      if (!lapsed(node)) pending = true;
    }
    if (!pending || Clock::now() >= deadline) break;
    keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
  std::vector<std::string> lanes;
  for (int node : said) lanes.push_back(store_->get(key("bye/" + std::to_string(node))));
  return lanes;
}

}  // namespace ringlab::launch
