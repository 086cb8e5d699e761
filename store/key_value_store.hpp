// Store: what a rendezvous needs from a key-value store, whoever serves it
// (c10d's Store, by the same name):
//  - StoreClient (store.hpp): a client of ringlab's own store, which rank 0 of
//    a TCP job hosts;
//  - C10dStore (c10d_client.hpp): PyTorch's c10d TCPStore, which torchrun's
//    agent hosts for its workers;
//  - a store handed over by torch.distributed to the `ringlab` backend of the
//    Python package (python/): a TCPStore, FileStore or HashStore behind
//    torch's own Python object.
// The TCP transport's rendezvous (transport/tcp/tcp.hpp's connect) and the
// NCCL backend's id exchange are written against this, so they run on any of
// them. Values are arbitrary bytes held in std::string; every wait has a
// timeout and its TimeoutError names the keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/comm_error.hpp"

namespace ringlab::store {

class Store {
 public:
  virtual ~Store() = default;

  // "host:port", or what else says where the store is ("torch's FileStore").
  virtual std::string address() const = 0;
  // The timeout used by the overloads that take none.
  virtual Duration timeout() const = 0;
  virtual void set_timeout(Duration timeout) = 0;

  virtual void set(const std::string& key, std::string_view value) = 0;
  // Waits until the key exists, then returns its value.
  virtual std::string get(const std::string& key, Duration timeout) = 0;
  std::string get(const std::string& key) { return get(key, timeout()); }
  // Adds delta to the integer stored at key (0 if absent); returns the sum.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  // Waits until every key exists; TimeoutError naming the missing ones.
  virtual void wait(const std::vector<std::string>& keys, Duration timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout()); }
  // True if every key exists (does not wait).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Sets key to desired if its value is expected (or it is absent and
  // expected is empty); returns the value after the operation.
  virtual std::string compare_set(const std::string& key, std::string_view expected,
                                  std::string_view desired) = 0;
  // Removes key; true if it existed.
  virtual bool delete_key(const std::string& key) = 0;
  virtual std::int64_t num_keys() = 0;
  // True once the store's server has closed this client's connection, looked
  // at without waiting. A store without a connection of its own says false.
  virtual bool connection_closed() { return false; }
};

}  // namespace ringlab::store
