// The TCP transport: ranks are processes that talk over TCP. Boost.Asio runs
// the store and sets the connections up; the messages go through a poll()
// loop of the engine's own (engine.hpp).
// A program gets a ProcessGroup on it with init_process_group("tcp")
// (backends/backends.hpp).
//
// The pieces, in the order a job uses them:
//  - Rendezvous / from_environment(): who this process is (RANK, WORLD_SIZE,
//    LOCAL_RANK) and where rank 0 listens (MASTER_ADDR, MASTER_PORT), read
//    from the variables torchrun, Slurm or Open MPI set.
//  - StoreServer / Store: a small key-value store like PyTorch's TCPStore.
//    Rank 0 hosts it (a background thread) at MASTER_PORT; every rank is a
//    client, served once it has proved it knows the job token. Ranks publish
//    their addresses in it; the NCCL backend publishes its ncclUniqueId in
//    it. StoreLimits bounds what any client can make it hold or wait for.
//  - connect(): every rank listens on an ephemeral port, publishes "addr:port"
//    in the store, and connects to every other rank (the higher rank of each
//    pair connects, the lower accepts), checking a handshake (magic, version,
//    ranks, world size, job id, and each side's proof of the job token) so
//    stray connections and other jobs' ranks are refused.
//  - TcpTransport: the Transport over those connections. Messages are
//    length-framed (transport/tcp/framing.hpp documents the header); a wait
//    drives the sockets itself from the calling thread (no hand-off to an I/O
//    thread), reads payloads straight into posted receive buffers and writes
//    header + payload with one scatter-gather call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport.hpp"

namespace ringlab::tcp {

// The longest timeout ringlab accepts (RINGLAB_TIMEOUT_MS, --timeout-ms):
// 2^31 - 1 ms, about 24.8 days. Longer ones would overflow deadline
// arithmetic and poll()'s millisecond count.
inline constexpr Duration kMaxTimeout{2147483647};
// The largest world (WORLD_SIZE): 2^20 ranks.
inline constexpr int kMaxWorldSize = 1 << 20;

// Where and who: filled from the environment by from_environment().
struct Rendezvous {
  std::string master_addr = "127.0.0.1";  // MASTER_ADDR: where rank 0's store is reached
  int master_port = 29500;                // MASTER_PORT: the store's port
  int rank = -1;                          // RANK
  int world_size = -1;                    // WORLD_SIZE
  int local_rank = 0;                     // LOCAL_RANK
  // Where the store (rank 0) and every rank's own listener bind, and the
  // address a rank publishes for the others: loopback unless told otherwise.
  std::string bind_addr = "127.0.0.1";  // RINGLAB_BIND_ADDR
  Duration timeout = kDefaultTimeout;   // RINGLAB_TIMEOUT_MS: rendezvous and every wait
  // A connection that opens and says nothing (no handshake) is closed after
  // this long. RINGLAB_HANDSHAKE_TIMEOUT_MS.
  Duration handshake_timeout = std::chrono::seconds(5);
  // While the rendezvous waits, rank 0 logs this often which ranks it still
  // waits for (transport/tcp/wait_report.hpp); zero: never.
  Duration report_interval = std::chrono::seconds(5);
  // The job's secret (RINGLAB_JOB_TOKEN; ringlab run makes one for its
  // ranks). Every rank proves it knows it to the store and to each other
  // rank (HMAC-SHA256 over fresh challenges); it never crosses the wire and
  // the store never holds it. Empty: an open job, which any process that
  // reaches the store may join; connect() allows that only while this rank
  // binds to loopback.
  std::string job_token;
  // The processors this rank's host gives its ranks; 0: this process's CPU
  // affinity. More ranks on the host than this, on any rank, makes the
  // transport prefer fewer messages (crowding.hpp). Tests set it.
  int processors = 0;
};

// Looks up one environment variable; nullptr when unset.
using EnvironmentLookup = std::function<const char*(const char* name)>;

// Reads MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK (torchrun's
// names); falls back to Slurm's SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID and
// Open MPI's OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE /
// OMPI_COMM_WORLD_LOCAL_RANK; then RINGLAB_BIND_ADDR, RINGLAB_TIMEOUT_MS,
// RINGLAB_HANDSHAKE_TIMEOUT_MS, RINGLAB_JOB_TOKEN. MASTER_ADDR defaults to 127.0.0.1; the others
// that have no default throw std::invalid_argument naming the variable and what
// to set ("MASTER_PORT is not set: export MASTER_PORT=29500 (the port rank 0's
// store listens on)", "RANK=4 but WORLD_SIZE=4: RANK must be in 0..3").
Rendezvous from_environment();
// The same, reading variables through `lookup` (tests pass a map).
Rendezvous from_environment(const EnvironmentLookup& lookup);

// Thrown by Store operations that run out of time (a TimeoutError, so a
// CommError): names the key(s) and the store's address.
using StoreTimeoutError = TimeoutError;
// Thrown by Store operations when the store itself is lost: its connection
// closed or broke, or it did not answer in time. Names the store's address.
class StoreLostError : public CommError {
 public:
  using CommError::CommError;
};
// Thrown when what answers at the store's address is not this job's store:
// another job's (it cannot prove it knows the job token) or not a ringlab
// store at all. Trying again would not change that, so a Store does not.
class WrongStoreError : public CommError {
 public:
  using CommError::CommError;
};

// What the store refuses, and when it gives up on a connection (README's
// limits table lists the defaults). A refused request gets an error reply
// saying which limit it hit; the store goes on serving the others.
struct StoreLimits {
  // The largest request body: a set's key and value with their 4-byte
  // lengths (at most 64 MiB, the protocol's limit).
  std::size_t max_request_bytes = std::size_t{64} << 20;
  std::size_t max_key_bytes = 4096;
  // Keys and values held, plus the request bodies being received.
  std::size_t max_total_bytes = std::size_t{256} << 20;
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
// once it has proved it knows job_token (see Rendezvous::job_token).
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
// bytes held in std::string. One request at a time per Store object (calls
// from several threads are serialised); use one Store per thread for
// concurrent blocking waits.
class Store {
 public:
  // Connects to host:port, retrying until `timeout` (rank 0 may start later);
  // then throws CommError "could not reach the store at HOST:PORT within N ms:
  // is rank 0 running and MASTER_ADDR/MASTER_PORT right? (last error: ...)".
  // A server that is not a ringlab store, or a store that does not know
  // job_token (another job's), fails at once, saying so.
  Store(const std::string& host, int port, Duration timeout = kDefaultTimeout,
        std::string job_token = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The timeout used by the overloads that take none.
  Duration timeout() const;
  void set_timeout(Duration timeout);
  std::string address() const;  // "host:port"

  void set(const std::string& key, std::string_view value);
  // Waits until the key exists, then returns its value; TimeoutError naming the
  // key after `timeout`.
  std::string get(const std::string& key, Duration timeout);
  std::string get(const std::string& key) { return get(key, timeout()); }
  // Adds delta to the integer stored at key (0 if absent) and returns the sum.
  std::int64_t add(const std::string& key, std::int64_t delta);
  // Waits until every key exists; TimeoutError naming the missing ones.
  void wait(const std::vector<std::string>& keys, Duration timeout);
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout()); }
  // Sets key to desired if its value is expected (or if it is absent and
  // expected is empty); returns the value after the operation (TCPStore's
  // compare_set).
  std::string compare_set(const std::string& key, std::string_view expected,
                          std::string_view desired);
  // True if every key exists (does not wait).
  bool check(const std::vector<std::string>& keys);
  // Removes key; true if it existed.
  bool delete_key(const std::string& key);
  std::int64_t num_keys();
  // True once the server has closed this client's connection (looked at
  // without waiting; false while another thread has a request in flight).
  bool connection_closed();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The Transport over TCP connections to every other rank (see connect()).
class TcpTransport final : public Transport {
 public:
  class Impl;
  explicit TcpTransport(std::unique_ptr<Impl> impl);
  ~TcpTransport() override;

  int rank() const override;
  int size() const override;
  std::string_view name() const override { return "tcp"; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override;
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override;
  void sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                MutBytes recv_data) override;

  // The rendezvous store this rank used (rank 0 also hosts it, for as long as
  // this transport lives). Other backends (NCCL) publish their ids in it.
  Store& store();
  std::shared_ptr<Store> shared_store();
  // The job id every rank agreed on through the store (in the handshakes).
  std::uint64_t job_id() const;
  // Agreed when the ranks connected (crowding.hpp).
  bool prefers_fewer_messages() const override;

 private:
  std::unique_ptr<Impl> impl_;
};

// Connects this rank to all others (store rendezvous: each rank listens on an
// ephemeral port at bind_addr, publishes "addr:port" in the store and
// connects to the others) and returns the transport, its timeout set to
// rendezvous.timeout. Rank 0 hosts the store (bound at bind_addr:master_port)
// for as long as its transport lives, and returns only once every other rank
// has finished connecting; meanwhile it logs every report_interval which
// ranks it still waits for. Throws CommError/TimeoutError on timeout naming
// the ranks that did not show up. (Returns the TcpTransport so callers reach
// store(); it converts to std::shared_ptr<Transport>.)
std::shared_ptr<TcpTransport> connect(const Rendezvous& rendezvous);

}  // namespace ringlab::tcp
