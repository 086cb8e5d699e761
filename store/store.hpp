// The rendezvous store: a small key-value store like PyTorch's TCPStore, the
// layer every multi-process job meets through. Rank 0 of a TCP job hosts one
// (transport/tcp/tcp.hpp: ranks publish their addresses in it), the NCCL
// backend passes its ncclUniqueId through it, and the elastic launcher keeps
// its rounds and heartbeats in it (launcher/rendezvous.hpp).
//
//  - StoreServer serves clients on a background thread (Boost.Asio), each
//    once it has proved it knows the job token (HMAC-SHA256 over fresh
//    challenges, token_proof.hpp). StoreLimits bounds what any client can
//    make it hold or wait for.
//  - StoreClient is its client: set/get/add/wait/compare_set/check/delete/
//    num_keys, with a timeout on every wait. It is one Store (the interface,
//    key_value_store.hpp); C10dStore (c10d_client.hpp), PyTorch's, is another.
// The wire format is protocol.hpp's.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ops/comm_error.hpp"
#include "store/key_value_store.hpp"

namespace ringlab::store {

// Thrown by StoreClient operations that run out of time (a TimeoutError, so a
// CommError): names the key(s) and the store's address.
using StoreTimeoutError = TimeoutError;
// Thrown by StoreClient operations when the store itself is lost: its connection
// closed or broke, or it did not answer in time. Names the store's address.
class StoreLostError : public CommError {
 public:
  using CommError::CommError;
};
// Thrown when what answers at the store's address is not this job's store:
// another job's (it cannot prove it knows the job token) or not a ringlab
// store at all. Trying again would not change that, so a StoreClient does not.
class WrongStoreError : public CommError {
 public:
  using CommError::CommError;
};

// What a key costs the store beyond the bytes of its name and value: the
// map's node, the shared value's control block and the allocator's headers.
// Measured on x86-64 with glibc's malloc and libstdc++ (a store in a process
// of its own, its resident memory before and after), a key cost 158 bytes
// with a name of about 10 bytes and an empty value (1,000,000 keys), 204
// with a name of about 29 bytes (300,000 keys), and 268 with a 100-byte value
// (300,000 keys): 148 to 175 bytes beyond its name and value (names and
// values over 15 bytes take an allocation of their own). 192 covers each.
inline constexpr std::size_t kKeyOverheadBytes = 192;

// What the store refuses, and when it gives up on a connection (README's
// limits table lists the defaults). A refused request gets an error reply
// saying which limit it hit; the store goes on serving the others.
struct StoreLimits {
  // The largest request body: a set's key and value with their 4-byte
  // lengths (at most 64 MiB, the protocol's limit).
  std::size_t max_request_bytes = std::size_t{64} << 20;
  std::size_t max_key_bytes = 4096;
  // The keys held, each at its cost (its name and value, and
  // kKeyOverheadBytes), plus the request bodies being received.
  std::size_t max_total_bytes = std::size_t{256} << 20;
  // Keys held at once; a request that would add one more is refused.
  std::size_t max_keys = std::size_t{1} << 20;
  // Connections at once. A newcomer beyond it displaces the oldest
  // connection that has not said a byte yet, or else is refused.
  int max_connections = 1024;
  // After hello, a connection with no request under way for this long is
  // closed; the client reconnects by itself when it needs the store again.
  Duration idle_timeout = std::chrono::seconds(60);
  // A request must arrive whole within this of its first byte.
  Duration request_timeout = std::chrono::seconds(30);
};

// The store's server: rank 0 runs one. Serves clients on a background thread
// until destroyed. Port 0 picks a free port (see port()). A client is served
// once it has proved it knows job_token (token_proof.hpp); an empty token
// makes an open store, which any client that reaches it may use.
class StoreServer {
 public:
  // Throws CommError if the address cannot be bound (naming it, and what to do
  // when the port is taken).
  StoreServer(const std::string& bind_addr, int port,
              Duration handshake_timeout = std::chrono::seconds(5), StoreLimits limits = {},
              std::string job_token = {});
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  int port() const;  // the port actually bound

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// A client of the store, like torch.distributed.TCPStore. Values are arbitrary
// bytes held in std::string. One request at a time per StoreClient object (calls
// from several threads are serialised); use one StoreClient per thread for
// concurrent blocking waits.
class StoreClient final : public Store {
 public:
  // Connects to host:port, retrying until `timeout` (rank 0 may start later);
  // then throws CommError "could not reach the store at HOST:PORT within N ms:
  // is rank 0 running and MASTER_ADDR/MASTER_PORT right? (last error: ...)".
  // A server that is not a ringlab store, or a store that does not know
  // job_token (another job's), fails at once, saying so.
  StoreClient(const std::string& host, int port, Duration timeout = kDefaultTimeout,
              std::string job_token = {});
  ~StoreClient() override;
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  // The timeout used by the overloads that take none.
  Duration timeout() const override;
  void set_timeout(Duration timeout) override;
  std::string address() const override;  // "host:port"

  using Store::get;
  using Store::wait;
  void set(const std::string& key, std::string_view value) override;
  // Waits until the key exists, then returns its value; TimeoutError naming the
  // key after `timeout`.
  std::string get(const std::string& key, Duration timeout) override;
  // Adds delta to the integer stored at key (0 if absent) and returns the sum.
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  // Waits until every key exists; TimeoutError naming the missing ones.
  void wait(const std::vector<std::string>& keys, Duration timeout) override;
  // Sets key to desired if its value is expected (or if it is absent and
  // expected is empty); returns the value after the operation (TCPStore's
  // compare_set).
  std::string compare_set(const std::string& key, std::string_view expected,
                          std::string_view desired) override;
  // True if every key exists (does not wait).
  bool check(const std::vector<std::string>& keys) override;
  // Removes key; true if it existed.
  bool delete_key(const std::string& key) override;
  std::int64_t num_keys() override;
  // True once the server has closed this client's connection (looked at
  // without waiting; false while another thread has a request in flight).
  bool connection_closed() override;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab::store
