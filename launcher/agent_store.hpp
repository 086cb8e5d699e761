// The elastic agents' store, over ringlab's rendezvous store (store/store.hpp):
//
//  - The agent that can bind the endpoint hosts it; the others reach it there
//    (--rdzv-conf is_host=true/false decides instead).
//  - It serves only clients that prove they know the job's token
//    (ElasticOptions::job_token: HMAC-SHA256 over fresh challenges, the
//    store's own proof). Every request of an agent, its heartbeats and its
//    writes to the rendezvous state included, goes over such a connection,
//    so a process without the token can neither read nor write anything.
//    An open job (--rdzv-conf open=true) has no token.
//  - The first agent to reach it names the run (--rdzv-id) and the job's shape
//    (--nproc-per-node, --nnodes); an agent that differs is refused with what
//    to change.
//
// The rounds and heartbeats (rendezvous.hpp) and the failures, outcome and
// goodbyes (job_ledger.hpp) keep their keys under ringlab/elastic/<run id>/.
// Every request can throw ringlab::CommError when the store is gone (its
// host ended).
#pragma once

#include <memory>
#include <string>

#include "launcher/elastic_options.hpp"

namespace ringlab::store {
class StoreClient;
class StoreServer;
}  // namespace ringlab::store

namespace ringlab::launch {

class AgentStore {
 public:
  explicit AgentStore(const ElasticOptions& options);
  ~AgentStore();
  AgentStore(const AgentStore&) = delete;
  AgentStore& operator=(const AgentStore&) = delete;

  // Hosts the store at the endpoint or reaches it there, and checks the run
  // id and this node's shape against the job's. Throws std::runtime_error
  // saying what is wrong and what to do.
  void connect();
  bool hosts() const { return server_ != nullptr; }
  // "HOST:PORT"
  std::string endpoint() const;

  store::StoreClient& client() { return *client_; }
  // The key of one of this job's entries: ringlab/elastic/<run id>/<name>.
  std::string key(const std::string& name) const { return prefix_ + name; }

 private:
  void host_or_join();
  void check_job();

  const ElasticOptions& options_;
  std::string prefix_;
  std::unique_ptr<store::StoreServer> server_;
  std::unique_ptr<store::StoreClient> client_;
};

// Throws std::invalid_argument when an open job (no token) would listen at
// an address other machines can reach: its workers would refuse to.
void require_token_beyond_loopback(const ElasticOptions& options, const std::string& address,
                                   const std::string& what);

}  // namespace ringlab::launch
