// connect(): from a WorldSpec to a connected
// TcpTransport.
//
//  1. Rank 0 starts the store server at bind_addr:master_port; every rank
//     connects a StoreClient to master_addr:master_port (retrying until the
//     timeout, since rank 0 may start last). Unless somebody else hosts the
//     store: torchrun's agent (WorldSpec::agent_store, a c10d TCPStore every
//     rank reaches with store/c10d_client.hpp), or the caller of
//     connect(world, store) (the Python package, with torch's store). Then no
//     rank hosts one, and rank 0 says once that the job is open if it has no
//     token, since such a store authenticates nobody.
//  2. Rank 0 publishes the job: a random job id and its world size. The others
//     read it and check their WORLD_SIZE against it; every rank claims its
//     RANK (two processes with the same RANK fail at once).
//  3. Each rank listens on an ephemeral port and publishes "host:port".
//  4. Every pair of ranks connects and checks a handshake (mesh.hpp); garbage
//     reaching a rank's listener is logged and refused.
//  5. Every other rank tells the store it is done; rank 0 waits for that, so
//     it keeps the store up until every rank has read the addresses it needs.
//  6. The engine is set up for the host (engine_policy.hpp): writer threads
//     where the host has two processors per rank, and the ranks agree, over
//     the new connections, whether a host runs more ranks than it has
//     processors (crowding.hpp).
// Every step has the rendezvous deadline; a timeout names the ranks missing.
// While rank 0 waits (steps 4 and 5) it logs every few seconds whom it waits
// for (wait_report.hpp), so a job whose other ranks never come is not silent.
//
// Blame: steps 4 and 5 watch the connections already made
// (rendezvous_watch.hpp): a peer that closes or aborts fails the rendezvous
// at once, naming the rank at fault, and a rendezvous that fails sends an
// abort frame naming that rank to the peers connected so far, so the ones
// already waiting in their first collective name it too. The store lives in
// rank 0: losing it (its connection closes, or it stops answering) is
// reported as losing rank 0 (or the launcher, whose store it was). At the end of step 5 rank 0
// gives the ranks still connecting a little longer than its own deadline to say whom they wait for
// (their aborts), so it names the rank they all wait on, not the lowest one missing.
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>
#include <thread>

#include "net/asio.hpp"
#include "net/log.hpp"
#include "store/c10d_client.hpp"
#include "transport/tcp/crowding.hpp"
#include "transport/tcp/engine_policy.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/loopback.hpp"
#include "transport/tcp/mesh.hpp"
#include "transport/tcp/rendezvous_watch.hpp"
#include "transport/tcp/socket_util.hpp"
#include "transport/tcp/transport_impl.hpp"
#include "transport/tcp/wait_report.hpp"

namespace ringlab::tcp {

// The ranks meet through the rendezvous store (store/store.hpp), and tell the
// operator through the log they share with it (net/log.hpp).
using net::log_line;
using store::StoreClient;
using store::StoreLimits;
using store::StoreLostError;
using store::StoreServer;
using store::StoreTimeoutError;
using store::WrongStoreError;

namespace {

const std::string kPrefix = "ringlab/tcp/";
std::string address_key(int rank) { return kPrefix + "addr/" + std::to_string(rank); }

std::uint64_t fresh_job_id() {
  std::random_device device;
  std::uint64_t id = (std::uint64_t{device()} << 32) ^ device();
  id ^= static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  return id == 0 ? 1 : id;
}

// The address the other ranks should use to reach this rank's listener.
std::string advertised_host(const WorldSpec& r) {
  ErrorCode error;
  const auto bind = asio::ip::make_address(r.bind_addr, error);
  if (error || !bind.is_unspecified()) return r.bind_addr;
  // Bound to every interface: advertise the one that routes to rank 0.
  asio::io_context io;
  asio::ip::udp::socket probe(io);
  try {
    const auto master =
        *asio::ip::udp::resolver(io).resolve(r.master_addr, std::to_string(r.master_port)).begin();
    probe.connect(master.endpoint());
    return probe.local_endpoint().address().to_string();
  } catch (const std::exception&) {
    return asio::ip::host_name();
  }
}

void check_rendezvous(const WorldSpec& r) {
  if (r.world_size < 1 || r.world_size > kMaxWorldSize)
    throw std::invalid_argument("WorldSpec.world_size = " + std::to_string(r.world_size) +
                                ": set WORLD_SIZE to the number of processes (1 to " +
                                std::to_string(kMaxWorldSize) + ")");
  for (const auto& [name, limit] :
       {std::pair{"timeout", r.timeout}, std::pair{"handshake_timeout", r.handshake_timeout}})
    if (limit <= Duration::zero() || limit > kMaxTimeout)
      throw std::invalid_argument("WorldSpec." + std::string(name) + " = " +
                                  std::to_string(limit.count()) + " ms: use 1 to " +
                                  std::to_string(kMaxTimeout.count()) + " ms");
  if (r.rank < 0 || r.rank >= r.world_size)
    throw std::invalid_argument("RANK=" + std::to_string(r.rank) +
                                " but WORLD_SIZE=" + std::to_string(r.world_size) +
                                ": RANK must be in 0.." + std::to_string(r.world_size - 1));
  if (r.master_port < 0 || r.master_port > 65535)
    throw std::invalid_argument("MASTER_PORT=" + std::to_string(r.master_port) +
                                " is not a TCP port: use 1..65535, e.g. 29500");
  // A job without a token is open to whoever reaches its ports: only on loopback.
  require_loopback_bind(r);
}

long long remaining_ms(Clock::time_point deadline) {
  return std::max<long long>(ms_left(deadline), 1);
}

// How long rank 0 waits past its deadline, at the end of the rendezvous, for
// the ranks still connecting to say whom they wait for.
constexpr Duration kLastWordPatience{500};
constexpr auto kEndWatchInterval = std::chrono::milliseconds(20);

// Step 5 on rank 0: waits until every other rank is done, watching the
// connections (sockets[q] to rank q). Throws naming the rank at fault, after
// telling the others.
void wait_until_all_done(const WorldSpec& r, store::Store& store, Clock::time_point deadline,
                         WaitReport& report, std::vector<asio::ip::tcp::socket>& sockets) {
  const std::string me = "rank " + std::to_string(r.rank);
  std::vector<std::string> done_keys;
  for (int q = 1; q < r.world_size; ++q) done_keys.push_back(kPrefix + "done/" + std::to_string(q));
  auto not_done = [&] {
    std::vector<int> absent;
    for (int q = 1; q < r.world_size; ++q)
      if (!store.check({done_keys[static_cast<std::size_t>(q - 1)]})) absent.push_back(q);
    return absent;
  };
  // Every rank is told whom this rank blames before it throws.
  auto fail = [&](int culprit, const std::string& why, bool timed_out) {
    for (int q = 1; q < r.world_size; ++q)
      if (q != culprit)
        send_abort(sockets[static_cast<std::size_t>(q)].native_handle(), 0, culprit, why);
    if (timed_out) throw TimeoutError(why);
    throw PeerError(culprit, why);
  };
  std::vector<bool> watched(static_cast<std::size_t>(r.world_size), true);
  watched[0] = false;
  const auto last_word = deadline + std::min(r.timeout, kLastWordPatience);
  while (!store.check(done_keys)) {
    // News from a connection?
    std::vector<pollfd> fds;
    for (int q = 1; q < r.world_size; ++q)
      if (watched[static_cast<std::size_t>(q)])
        fds.push_back({sockets[static_cast<std::size_t>(q)].native_handle(), POLLIN, 0});
    const auto now = Clock::now();
    const auto wake = std::min(
        {now + kEndWatchInterval, report.next_due(), now < deadline ? deadline : last_word});
    ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(0, ms_left(wake))));
    for (int q = 1; q < r.world_size; ++q) {
      if (!watched[static_cast<std::size_t>(q)]) continue;
      const ConnectionNews news =
          look_at_connection(sockets[static_cast<std::size_t>(q)].native_handle());
      if (news.kind == ConnectionNews::Kind::Quiet) continue;
      // A rank that has finished its rendezvous is the engine's: what it
      // sends (an abort too, left in the socket) is read there.
      if (news.kind == ConnectionNews::Kind::Talking ||
          store.check({done_keys[static_cast<std::size_t>(q - 1)]})) {
        watched[static_cast<std::size_t>(q)] = false;
        continue;
      }
      const std::string rank = "rank " + std::to_string(q);
      if (news.kind == ConnectionNews::Kind::Closed)
        fail(q,
             me + ": lost " + rank + " at the end of the rendezvous (its connection closed: " +
                 news.reason + "): " + rank + " probably exited or crashed",
             false);
      if (news.kind == ConnectionNews::Kind::Aborted) {
        const int culprit = news.culprit > 0 && news.culprit < r.world_size ? news.culprit : q;
        fail(culprit, abort_message(0, q, culprit, news.reason), false);
      }
    }
    if (Clock::now() >= last_word) {
      const std::vector<int> absent = not_done();
      if (absent.empty()) break;
      fail(absent.front(),
           me + ": " + list_ranks({absent.front()}) +
               " did not finish the rendezvous: timed out after " +
               std::to_string(r.timeout.count()) + " ms at its end: " + list_ranks(absent) +
               " did not finish connecting to the others (see their errors)",
           true);
    }
    if (Clock::now() < deadline)
      report.report_if_due(not_done(), " to finish connecting to the others");
  }
}

// How long rank 0 keeps the store up after its rendezvous failed: the others
// are near their own deadlines and should reach them and say what they
// found, not lose the store first and blame rank 0.
constexpr Duration kStoreLinger{1000};
// How long a rank whose connecting timed out gives the store to answer.
constexpr Duration kProbe{250};

// A short question to the store: false if it does not answer (a stopped or
// hung rank 0). The store keeps its timeout.
bool store_answers(store::Store& store, Duration patience) {
  const Duration saved = store.timeout();
  store.set_timeout(patience);
  try {
    store.num_keys();
  } catch (const CommError&) {
    store.set_timeout(saved);
    return false;
  }
  store.set_timeout(saved);
  return true;
}

// A store's own errors (a c10d store's timeout, its garbled answer) say what
// and where, not which rank met them: that rank's name goes in front, once.
// Called in a catch block.
[[noreturn]] void rethrow_naming(const std::string& me) {
  try {
    throw;
  } catch (const PeerError&) {
    throw;  // names its culprit
  } catch (const StoreLostError&) {
    throw;  // named where it is caught: losing rank 0, or the launcher's store
  } catch (const CommError& error) {
    const std::string what = error.what();
    if (what.starts_with(me + ":") || what.starts_with(me + " ")) throw;
    if (dynamic_cast<const TimeoutError*>(&error)) throw TimeoutError(me + ": " + what);
    if (dynamic_cast<const WrongStoreError*>(&error)) throw WrongStoreError(me + ": " + what);
    throw CommError(me + ": " + what);
  }
}

std::shared_ptr<TcpTransport> connect_steps(const WorldSpec& r,
                                            std::unique_ptr<TcpTransport::Impl>& impl);
std::shared_ptr<TcpTransport> connect_through_launcher_store(
    const WorldSpec& r, std::unique_ptr<TcpTransport::Impl>& impl);
std::shared_ptr<store::Store> reach_c10d_store(const WorldSpec& r);

}  // namespace

std::shared_ptr<TcpTransport> connect(const WorldSpec& r) {
  check_rendezvous(r);
  auto impl = std::make_unique<TcpTransport::Impl>();
  if (r.agent_store) {
    // torchrun's agent hosts the store: nobody here does.
    impl->store = reach_c10d_store(r);
    return connect_through_launcher_store(r, impl);
  }
  const std::string me = "rank " + std::to_string(r.rank);
  if (r.rank == 0) {
    try {
      return connect_steps(r, impl);
    } catch (...) {
      if (impl && impl->server) std::this_thread::sleep_for(std::min(r.timeout, kStoreLinger));
      rethrow_naming(me);
    }
  }
  try {
    return connect_steps(r, impl);
  } catch (const StoreLostError& lost) {
    throw PeerError(0, me + ": lost rank 0, which hosts the store: " + lost.what());
  } catch (...) {
    rethrow_naming(me);
  }
}

std::shared_ptr<TcpTransport> connect(const WorldSpec& r, std::shared_ptr<store::Store> given) {
  if (!given) throw std::invalid_argument("tcp::connect: no store given");
  check_rendezvous(r);
  auto impl = std::make_unique<TcpTransport::Impl>();
  impl->store = std::move(given);
  return connect_through_launcher_store(r, impl);
}

namespace {

// The steps on a store somebody else hosts: the ranks are its clients, and
// losing it is losing the launcher, not rank 0.
std::shared_ptr<TcpTransport> connect_through_launcher_store(
    const WorldSpec& r, std::unique_ptr<TcpTransport::Impl>& impl) {
  const std::string me = "rank " + std::to_string(r.rank);
  if (r.rank == 0 && r.job_token.empty() && r.say_open)
    log_line(me + ": this job is open: its store (" + impl->store->address() +
             ") has no authentication and RINGLAB_JOB_TOKEN is not set, so the ranks listen "
             "on loopback only, and any process on this machine can join the job. Export the "
             "same RINGLAB_JOB_TOKEN=<secret> to every rank to have the ranks prove it to each "
             "other");
  try {
    return connect_steps(r, impl);
  } catch (const StoreLostError& lost) {
    throw CommError(me + ": lost the launcher's store: " + lost.what());
  } catch (...) {
    rethrow_naming(me);
  }
}

// The c10d TCPStore torchrun's agent hosts at MASTER_ADDR:MASTER_PORT.
std::shared_ptr<store::Store> reach_c10d_store(const WorldSpec& r) {
  try {
    return std::make_shared<store::C10dStore>(r.master_addr, r.master_port, r.timeout,
                                              r.store_prefix);
  } catch (const CommError& error) {
    throw CommError("rank " + std::to_string(r.rank) +
                    " (TORCHELASTIC_USE_AGENT_STORE=True: the launcher hosts the store): " +
                    error.what());
  }
}

// Where rank 0's store listens: the bind address, except that a loopback
// bind follows MASTER_ADDR within loopback. Debian's /etc/hosts names the
// machine 127.0.1.1, and torchrun --standalone gives the ranks the machine's
// name as MASTER_ADDR: a store on 127.0.0.1 would refuse them all. Where
// MASTER_ADDR is not on loopback at all, an open job (no token) cannot
// listen there: said now, instead of every rank timing out.
std::string store_address(const WorldSpec& r) {
  ErrorCode error;
  const auto bind = asio::ip::make_address(r.bind_addr, error);
  if (error || !bind.is_loopback()) return r.bind_addr;
  asio::io_context io;
  const auto found = asio::ip::tcp::resolver(io).resolve(r.master_addr, "", error);
  if (error) return r.bind_addr;  // connecting to it says what is wrong
  std::string addresses;
  for (const auto& entry : found) {
    const auto address = entry.endpoint().address();
    if (address == bind) return r.bind_addr;
    if (address.is_loopback()) return address.to_string();
    addresses += (addresses.empty() ? "" : ", ") + address.to_string();
  }
  throw std::invalid_argument(
      "rank 0: MASTER_ADDR=" + r.master_addr + " is " + addresses +
      ", off loopback, and this rank's store listens on loopback (RINGLAB_BIND_ADDR=" +
      r.bind_addr + "): for ranks on this machine export MASTER_ADDR=127.0.0.1; for ranks "
      "on several, export RINGLAB_BIND_ADDR=<this host's address> and the same "
      "RINGLAB_JOB_TOKEN=<secret> to every rank");
}

// Why rank 0 may not be there, where this rank sees it: a rank 0 bound to
// loopback refuses a MASTER_ADDR off loopback (store_address) and exits, and
// its ranks should not only ask whether it is running.
std::string refused_master_hint(const WorldSpec& r) {
  if (!resolve_host(r.bind_addr).on_loopback()) return "";
  const HostAddresses master = resolve_host(r.master_addr);
  if (!master.resolved() || master.off_loopback().empty() ||
      master.off_loopback() != master.listed())
    return "";
  return " (a rank 0 that binds to loopback, as this rank does (RINGLAB_BIND_ADDR=" + r.bind_addr +
         "), refuses MASTER_ADDR=" + r.master_addr + ", which is " + master.off_loopback() +
         ", off loopback: see rank 0's error)";
}

// Step 1: rank 0 starts the store, served only to those who prove they know
// the job token; every rank connects to it.
void open_store(const WorldSpec& r, TcpTransport::Impl& impl) {
  const std::string me = "rank " + std::to_string(r.rank);
  if (r.rank == 0) {
    StoreLimits limits;
    limits.max_connections = std::max(limits.max_connections, r.world_size + 64);
    // Each rank leaves three keys (its claim, its address, its done): room for
    // them however large the world, at a generous 128 bytes of name and value.
    const std::size_t keys = 3 * static_cast<std::size_t>(r.world_size) + 64;
    limits.max_keys = std::max(limits.max_keys, keys);
    limits.max_total_bytes =
        std::max(limits.max_total_bytes, keys * (store::kKeyOverheadBytes + 128));
    impl.server = std::make_unique<StoreServer>(store_address(r), r.master_port,
                                                r.handshake_timeout, limits, r.job_token);
    if (r.job_token.empty() && r.say_open)
      log_line(me + ": this job has no token (RINGLAB_JOB_TOKEN is not set): any process that " +
               "reaches port " + std::to_string(r.master_port) + " on this machine can join it. " +
               "Export the same RINGLAB_JOB_TOKEN=<secret> to every rank: ringlab run makes one " +
               "for the ranks of one node, ranks on several nodes must be given it, and an open " +
               "elastic job (--rdzv-conf open=true) has none");
  }
  // Without a token, only on loopback (loopback.hpp): refused at once off it.
  const std::string host = loopback_store_host(r);
  try {
    impl.store = std::make_shared<StoreClient>(host, r.master_port, r.timeout, r.job_token);
  } catch (const WrongStoreError& error) {
    throw WrongStoreError(me + ": " + error.what());
  } catch (const TimeoutError& error) {
    if (r.rank == 0) throw TimeoutError(me + ": " + error.what());
    throw PeerError(0, me + ": could not reach rank 0, which hosts the store: " + error.what() +
                           refused_master_hint(r));
  } catch (const CommError& error) {
    if (r.rank == 0) throw CommError(me + ": " + error.what());
    throw PeerError(0, me + ": could not reach rank 0, which hosts the store: " + error.what() +
                           refused_master_hint(r));
  }
}

// What a store holds, to be quoted in an error: at most `most` characters,
// what is not printable ASCII as '?' (a stranger may have written it).
std::string printable(const std::string& text, std::size_t most) {
  std::string out = text.substr(0, most);
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return text.size() > most ? out + "..." : out;
}

// Step 2: rank 0 names the job; every rank checks the world size and claims
// its rank. Returns the job id.
std::uint64_t join_job(const WorldSpec& r, store::Store& store, Clock::time_point deadline) {
  const std::string me = "rank " + std::to_string(r.rank);
  const std::string job_key = kPrefix + "job";
  if (r.rank == 0)
    store.set(job_key, std::to_string(fresh_job_id()) + " " + std::to_string(r.world_size));
  const std::string job = store.get(job_key, Duration(remaining_ms(deadline)));
  std::uint64_t job_id = 0;
  int rank0_world = 0;
  std::istringstream words(job);
  char extra = 0;
  if (!(words >> job_id >> rank0_world) || words >> extra || job_id == 0 || rank0_world < 1)
    throw CommError(me + ": the store's " + job_key + " holds '" + printable(job, 64) + "'" +
                    ", which is not a job rank 0 writes (a job id and a world size): something "
                    "else writes to this store (" + store.address() +
                    "): give the job a store of its own (its own MASTER_PORT)" +
                    (r.job_token.empty() ? ", and a RINGLAB_JOB_TOKEN" : ""));
  if (rank0_world != r.world_size)
    throw std::invalid_argument(
        me + " has WORLD_SIZE=" + std::to_string(r.world_size) + " but " +
        (r.rank == 0 ? "the store holds a job of WORLD_SIZE=" + std::to_string(rank0_world) +
                           " (another rank 0's?)"
                     : "rank 0 has WORLD_SIZE=" + std::to_string(rank0_world)) +
        ": start every process with the same WORLD_SIZE");
  if (store.add(kPrefix + "claim/" + std::to_string(r.rank), 1) != 1)
    throw std::invalid_argument(me + ": another process already joined this job as RANK=" +
                                std::to_string(r.rank) + ": give every process its own RANK");
  return job_id;
}

// Step 3: publishes this rank's listener (port) and reads the addresses of
// the lower ranks, which this rank connects to (addresses[q], q < rank).
std::vector<std::string> exchange_addresses(const WorldSpec& r, store::Store& store, int port,
                                            Clock::time_point deadline) {
  const std::string host = advertised_host(r);
  const bool v6 = host.find(':') != std::string::npos;
  store.set(address_key(r.rank), (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port));
  std::vector<std::string> lower_keys;
  for (int q = 0; q < r.rank; ++q) lower_keys.push_back(address_key(q));
  try {
    store.wait(lower_keys, Duration(remaining_ms(deadline)));
  } catch (const StoreTimeoutError&) {
    std::vector<int> absent;
    for (int q = 0; q < r.rank; ++q)
      if (!store.check({address_key(q)})) absent.push_back(q);
    throw TimeoutError("rank " + std::to_string(r.rank) + ": timed out after " +
                       std::to_string(r.timeout.count()) + " ms waiting for " +
                       list_ranks(absent) + " to join (publish an address in the store at " +
                       store.address() + "): are they running with WORLD_SIZE=" +
                       std::to_string(r.world_size) + " and the same MASTER_ADDR/MASTER_PORT?");
  }
  std::vector<std::string> addresses(static_cast<std::size_t>(r.world_size));
  for (int q = 0; q < r.rank; ++q)
    addresses[static_cast<std::size_t>(q)] =
        store.get(address_key(q), Duration(remaining_ms(deadline)));
  return addresses;
}

std::shared_ptr<TcpTransport> connect_steps(const WorldSpec& r,
                                            std::unique_ptr<TcpTransport::Impl>& impl) {
  const auto deadline = Clock::now() + r.timeout;
  if (!impl->store) open_store(r, *impl);  // 1, unless the launcher's store was given
  store::Store& store = *impl->store;
  impl->job_id = join_job(r, store, deadline);  // 2

  // 3. Listen and publish.
  WaitReport report(r.rank, deadline - r.timeout, r.timeout,
                    r.rank == 0 ? r.report_interval : Duration::zero());
  // What the mesh hands over (its io_context and sockets) must outlive the
  // mesh, whose listener and timers live on that io_context: declared first,
  // it is destroyed last when a step below throws (ASan saw the mesh's timers
  // destroyed after their io_context when rank 0's last wait failed).
  Mesh::Connected connected;
  Mesh mesh(r, impl->job_id, deadline, &report);
  const std::vector<std::string> addresses = exchange_addresses(r, store, mesh.port(), deadline);

  // 4. Connections.
  mesh.watch_store([&store] { return store.connection_closed(); },
                   [&store, &r] { return store_answers(store, std::min(r.timeout, kProbe)); });
  connected = mesh.run(addresses);

  // 5. Rank 0 hosts the store (or stands for whoever does): it returns only
  // when every other rank has finished with it (connected to everyone), so no rank loses the store in
  // the middle of its rendezvous because rank 0 finished and exited. A set's
  // answer is sent before the waiters are woken, so every rank has its answer.
  if (r.rank != 0)
    store.set(kPrefix + "done/" + std::to_string(r.rank), "1");
  else
    wait_until_all_done(r, store, deadline, report, connected.sockets);

  // 6. The engine, set up for this host (engine_policy.hpp).
  const HostShare host{.processors = r.processors > 0 ? r.processors : processors_here(),
                       .ranks_here = ranks_on_this_host(connected.sockets)};
  impl->engine =
      std::make_shared<Engine>(r.rank, r.world_size, connected.release_descriptors());
  const EngineSetup setup = set_up(*impl->engine, host, r.writer_bytes, r.timeout);
  impl->overlaps_transfers = setup.overlaps_transfers;
  impl->prefers_fewer_messages = setup.prefers_fewer_messages;
  auto transport = std::make_shared<TcpTransport>(std::move(impl));
  transport->set_timeout(r.timeout);
  return transport;
}

}  // namespace

}  // namespace ringlab::tcp
