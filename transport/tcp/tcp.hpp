// The TCP transport: ranks are processes that talk over TCP. Boost.Asio runs
// the store and sets the connections up; the messages go through a poll()
// loop of the engine's own (engine.hpp).
// A program gets a ProcessGroup on it with init_process_group("tcp")
// (backends/backends.hpp).
//
// The pieces, in the order a job uses them:
//  - WorldSpec / from_environment(): who this process is (RANK, WORLD_SIZE,
//    LOCAL_RANK) and where rank 0 listens (MASTER_ADDR, MASTER_PORT), read
//    from the variables torchrun, Slurm or Open MPI set.
//  - The rendezvous store (store/store.hpp, a layer of its own): rank 0
//    hosts it (a background thread) at MASTER_PORT; every rank is a client,
//    served once it has proved it knows the job token. Ranks publish their
//    addresses in it; the NCCL backend publishes its ncclUniqueId in it.
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

#include "store/store.hpp"
#include "transport/transport.hpp"

namespace ringlab::tcp {

// The longest timeout ringlab accepts (RINGLAB_TIMEOUT_MS, --timeout-ms):
// 2^31 - 1 ms, about 24.8 days. Longer ones would overflow deadline
// arithmetic and poll()'s millisecond count.
inline constexpr Duration kMaxTimeout{2147483647};
// The largest world (WORLD_SIZE): 2^20 ranks.
inline constexpr int kMaxWorldSize = 1 << 20;

// Sends of at least this many bytes may leave through writer threads
// (WorldSpec::writer_bytes).
inline constexpr std::size_t kWriterBytes = 256 * 1024;

// Where and who: this process's place in its world and where rank 0 listens,
// filled from the environment by from_environment(). Settings only: the
// meeting itself is connect() (and, for elastic jobs, launch::Rendezvous).
struct WorldSpec {
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
  // Whether rank 0 says on stderr that a job without a token is open. A
  // process that makes several worlds of one job (torch's new_group) says it
  // for its first only: once per job.
  bool say_open = true;
  // The processors this rank's host gives its ranks; 0: this process's CPU
  // affinity. More ranks on the host than this, on any rank, makes the
  // transport prefer fewer messages (crowding.hpp). Tests set it.
  int processors = 0;
  // Where the host has at least two of those processors per rank on it, sends
  // of at least this many bytes go out through a writer thread per connection
  // (writers.hpp, engine_policy.hpp), so a rank sends while it receives and reduces.
  // Tests lower it to send everything that way.
  std::size_t writer_bytes = kWriterBytes;
  // TORCHELASTIC_USE_AGENT_STORE=True: torchrun's agent hosts a c10d
  // TCPStore at master_addr:master_port (store/c10d_client.hpp). Every rank
  // is its client and no rank hosts a store. The ranks' keys go under
  // store_prefix, as torch's workers' do: "/worker/attempt_N/", N =
  // TORCHELASTIC_RESTART_COUNT.
  bool agent_store = false;
  std::string store_prefix;
};

// Looks up one environment variable; nullptr when unset.
using EnvironmentLookup = std::function<const char*(const char* name)>;

// Reads MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK (torchrun's
// names); falls back to Slurm's SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID,
// Open MPI's OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE /
// OMPI_COMM_WORLD_LOCAL_RANK and Horovod's HOROVOD_RANK / HOROVOD_SIZE /
// HOROVOD_LOCAL_RANK; then RINGLAB_BIND_ADDR, RINGLAB_TIMEOUT_MS,
// RINGLAB_HANDSHAKE_TIMEOUT_MS, RINGLAB_JOB_TOKEN, and torchrun's
// TORCHELASTIC_USE_AGENT_STORE and TORCHELASTIC_RESTART_COUNT. MASTER_ADDR
// defaults to 127.0.0.1; the others
// that have no default throw std::invalid_argument naming the variable and what
// to set ("MASTER_PORT is not set: export MASTER_PORT=29500 (the port rank 0's
// store listens on)", "RANK=4 but WORLD_SIZE=4: RANK must be in 0..3").
// A program asks backends/rank_world.hpp, which reads the process's
// environment through these and decides what a launched rank does.
WorldSpec from_environment();
// The same, reading variables through `lookup` (tests pass a map).
WorldSpec from_environment(const EnvironmentLookup& lookup);

// A rank's place in its job, as a launcher gives it.
struct RankPlace {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
};
// Whether `lookup` holds a world size and a rank under any of the names
// above: a launcher started this process as one rank of a job.
bool names_a_rank(const EnvironmentLookup& lookup);
// The place alone (world size, rank, local rank), checked as
// from_environment() checks it: it throws the same errors.
RankPlace place_from_environment(const EnvironmentLookup& lookup);
// The settings alone (RINGLAB_BIND_ADDR, RINGLAB_TIMEOUT_MS,
// RINGLAB_HANDSHAKE_TIMEOUT_MS, RINGLAB_JOB_TOKEN) into `world`, checked as
// from_environment() checks them: for a rank whose place and store come from
// elsewhere (torch.distributed's).
void read_settings(const EnvironmentLookup& lookup, WorldSpec& world);

// The Transport over TCP connections to every other rank (see connect()).
class TcpTransport final : public Transport {
 public:
  class Impl;
  explicit TcpTransport(std::unique_ptr<Impl> impl);
  ~TcpTransport() override;

  int rank() const override;
  int size() const override;
  std::string_view name() const override { return "tcp"; }
  bool receives_from_any_source() const override { return true; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override;
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override;
  // The frames say the dtype (framing.hpp's element field).
  std::unique_ptr<Request> isend_typed(int dst, Tag tag, ConstBytes data, DType dtype) override;
  std::unique_ptr<Request> irecv_typed(int src, Tag tag, MutBytes data, DType dtype) override;
  void sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                MutBytes recv_data) override;

  // The rendezvous store this rank used (rank 0 also hosts it, for as long as
  // this transport lives, unless somebody else does: torchrun's agent, the
  // caller of connect(world, store)). Other backends (NCCL) publish their ids
  // in it.
  store::Store& store();
  std::shared_ptr<store::Store> shared_store();
  // The job id every rank agreed on through the store (in the handshakes).
  std::uint64_t job_id() const;
  // Agreed when the ranks connected (crowding.hpp).
  bool prefers_fewer_messages() const override;
  bool overlaps_transfers() const override;

 private:
  std::unique_ptr<Impl> impl_;
};

// Connects this rank to all others (store rendezvous: each rank listens on an
// ephemeral port at bind_addr, publishes "addr:port" in the store and
// connects to the others) and returns the transport, its timeout set to
// world.timeout. Rank 0 hosts the store (bound at bind_addr:master_port)
// for as long as its transport lives, and returns only once every other rank
// has finished connecting; meanwhile it logs every report_interval which
// ranks it still waits for. Throws CommError/TimeoutError on timeout naming
// the ranks that did not show up. (Returns the TcpTransport so callers reach
// store(); it converts to std::shared_ptr<Transport>.)
// With world.agent_store, no rank hosts a store: every rank is a client of
// the launcher's c10d TCPStore.
std::shared_ptr<TcpTransport> connect(const WorldSpec& world);
// The same through a store somebody else hosts and this process already
// reached (the Python package passes the store torch.distributed hands its
// backend): no rank hosts one; world.master_addr/master_port are not used.
std::shared_ptr<TcpTransport> connect(const WorldSpec& world, std::shared_ptr<store::Store> store);

}  // namespace ringlab::tcp
