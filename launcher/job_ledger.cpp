#include "launcher/job_ledger.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "store/store.hpp"

namespace ringlab::launch {

namespace {
using Clock = std::chrono::steady_clock;
// How often a waiting agent looks again.
constexpr Milliseconds kPoll{100};
}  // namespace

int JobLedger::claim_first_failure(long long round) {
  const std::string first = store_.client().compare_set(
      store_.key("failure/" + std::to_string(round) + "/first"), "",
      std::to_string(rendezvous_.self().id));
  return std::atoi(first.c_str());
}

void JobLedger::record_failure(long long round, const std::string& record) {
  store_.client().set(store_.key("failure/" + std::to_string(round) + "/node" +
                                 std::to_string(rendezvous_.self().id)),
                      record);
}

std::optional<std::string> JobLedger::failure_of(long long round, int node, Milliseconds timeout) {
  return wait_for(
      store_.key("failure/" + std::to_string(round) + "/node" + std::to_string(node)), timeout);
}

void JobLedger::set_outcome(const std::string& outcome) {
  store_.client().compare_set(store_.key("outcome"), "", outcome);
}

std::optional<std::string> JobLedger::outcome(Milliseconds timeout) {
  return wait_for(store_.key("outcome"), timeout);
}

std::optional<std::string> JobLedger::wait_for(const std::string& key, Milliseconds timeout) {
  store::StoreClient& client = store_.client();
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (client.check({key})) return client.get(key);
    if (Clock::now() >= deadline) return std::nullopt;
    rendezvous_.keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
}

bool JobLedger::wait_finished(const Round& round, Milliseconds timeout) {
  store::StoreClient& client = store_.client();
  const std::string finished = store_.key("round/" + std::to_string(round.number) + "/finished");
  client.add(finished, 1);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (client.add(finished, 0) >= static_cast<long long>(round.nodes.size())) return true;
    if (Clock::now() >= deadline || rendezvous_.closed()) return false;
    rendezvous_.keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
}

void JobLedger::say_goodbye(const std::string& trace_lane) {
  store_.client().set(store_.key("bye/" + std::to_string(rendezvous_.self().id)), trace_lane);
}

std::vector<std::string> JobLedger::wait_for_goodbyes(Milliseconds timeout) {
  store::StoreClient& client = store_.client();
  const int nodes = static_cast<int>(client.add(store_.key("nodes"), 0));
  const auto deadline = Clock::now() + timeout;
  std::vector<int> said;
  for (;;) {
    said.clear();
    bool pending = false;
    for (int node = 1; node <= nodes; ++node) {
      if (node == rendezvous_.self().id) continue;
      if (client.check({store_.key("bye/" + std::to_string(node))})) {
        said.push_back(node);
        continue;
      }
      if (!rendezvous_.heartbeat_lapsed(node)) pending = true;
    }
    if (!pending || Clock::now() >= deadline) break;
    rendezvous_.keep_alive();
    std::this_thread::sleep_for(kPoll);
  }
  std::vector<std::string> lanes;
  for (int node : said) lanes.push_back(client.get(store_.key("bye/" + std::to_string(node))));
  return lanes;
}

}  // namespace ringlab::launch
