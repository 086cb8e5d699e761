// A client of PyTorch's c10d TCPStore (torch.distributed.TCPStore), so that
// ringlab's ranks can meet through the store a PyTorch launcher hosts:
// torchrun's agent serves one on MASTER_PORT and tells its workers so with
// TORCHELASTIC_USE_AGENT_STORE=True.
//
// The TCPStore's wire format, as its servers read it (docs/pytorch.md has the
// details, the sources they come from, and what changed between versions):
//  - a request is one byte of query type, then its arguments; a string is a
//    64-bit little-endian length and the bytes; a key list is a 64-bit count
//    and the strings; add's delta is an int64;
//  - replies: get and compare_set a string; add, num_keys and delete an
//    int64; check one byte (0 ready, 1 not ready); wait one byte (0 done,
//    1 cancelled) once every key exists;
//  - the query types' numbers changed: torch 1.x to 2.1 number them from SET =
//    0 (C10dProtocol::Legacy); torch 2.2 and later put VALIDATE = 0 first,
//    shifting the others by one, and a new connection must open with
//    VALIDATE and a magic number (C10dProtocol::Validated). Version 2.x also
//    lets a client cancel a wait that timed out (CANCEL_WAIT); 1.x does not,
//    so a Legacy client that gives up on a wait drops the connection (the
//    server would answer the wait later, out of step) and makes a new one.
// Auto finds out which protocol the server speaks, with a probe that neither
// kind of server takes for a request that changes anything (c10d_client.cpp).
//
// Like torch's TCPStore client, every key is sent with "/" in front; a
// key_prefix (torchrun's "/worker/attempt_N/") goes between, as torch's
// PrefixStore puts it. So a key this client sets is the key a PyTorch worker
// of the same job sees through its own store.
//
// The TCPStore has no authentication: whoever reaches its port may read and
// write every key. README's Security section says what ringlab allows such
// an open job to do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/key_value_store.hpp"

namespace ringlab::store {

enum class C10dProtocol : std::uint8_t {
  Auto,       // find out (probe) when connecting
  Legacy,     // torch 1.x .. 2.1: SET = 0, no handshake, no CANCEL_WAIT
  Validated,  // torch 2.2 and later: VALIDATE + magic first, SET = 1
};

// The largest value this client accepts in a reply (a garbled length must
// not make it allocate gigabytes): 64 MiB, ringlab's own store's limit.
inline constexpr std::uint64_t kMaxC10dValueBytes = std::uint64_t{64} << 20;

class C10dStore final : public Store {
 public:
  // Connects to the TCPStore at host:port, retrying until `timeout` (the
  // server may start later); then throws CommError "could not reach the c10d
  // store at HOST:PORT within N ms: ... (last error: ...)". With Auto, finds
  // out which protocol the server speaks first.
  C10dStore(const std::string& host, int port, Duration timeout = kDefaultTimeout,
            std::string key_prefix = {}, C10dProtocol protocol = C10dProtocol::Auto);
  ~C10dStore() override;
  C10dStore(const C10dStore&) = delete;
  C10dStore& operator=(const C10dStore&) = delete;

  C10dProtocol protocol() const;  // never Auto once connected
  const std::string& key_prefix() const;

  std::string address() const override;
  Duration timeout() const override;
  void set_timeout(Duration timeout) override;

  using Store::get;
  using Store::wait;
  void set(const std::string& key, std::string_view value) override;
  std::string get(const std::string& key, Duration timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  void wait(const std::vector<std::string>& keys, Duration timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  std::string compare_set(const std::string& key, std::string_view expected,
                          std::string_view desired) override;
  bool delete_key(const std::string& key) override;
  std::int64_t num_keys() override;
  bool connection_closed() override;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringlab::store
