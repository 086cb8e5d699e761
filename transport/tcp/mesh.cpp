// The listener and the handshakes of the rendezvous (see mesh.hpp).
#include "transport/tcp/mesh.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <exception>
#include <optional>

#include "net/log.hpp"
#include "store/token_proof.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/loopback.hpp"
#include "transport/tcp/rendezvous_watch.hpp"
#include "transport/tcp/socket_util.hpp"

namespace ringlab::tcp {

// Each side proves it knows the job token as the store's clients do
// (store/token_proof.hpp), with labels of its own; rejections go to the
// store's log.
using store::fresh_nonce;
using store::kAcceptingRankProof;
using store::kConnectingRankProof;
using net::log_line;
using store::Nonce;
using store::Proof;
using store::prove;
using store::same_proof;

namespace {

constexpr std::size_t kHandshakeBytes = kFrameHeaderBytes + kHelloBytes;
constexpr auto kConnectRetry = std::chrono::milliseconds(20);
// How often the connections already made (and the store's) are looked at.
constexpr auto kWatchInterval = std::chrono::milliseconds(20);

std::array<std::byte, kHandshakeBytes> encode_handshake(FrameKind kind, int source,
                                                        const Hello& hello) {
  std::array<std::byte, kHandshakeBytes> out{};
  const auto header = encode_frame_header({kind, source, 0, kHelloBytes});
  const auto body = encode_hello(hello);
  std::copy(header.begin(), header.end(), out.begin());
  std::copy(body.begin(), body.end(), out.begin() + kFrameHeaderBytes);
  return out;
}

// A rank's proof that it knows the job token, bound to both nonces and to
// the connection it is for (framing.hpp documents the layout).
Proof rank_proof(std::string_view token, std::string_view label, const Nonce& connecting_nonce,
                 const Nonce& accepting_nonce, std::uint64_t job, int world, int connecting,
                 int accepting) {
  std::array<std::byte, 20> fields{};
  for (int i = 0; i < 8; ++i) fields[i] = static_cast<std::byte>((job >> (8 * i)) & 0xFF);
  const auto put32 = [&](int at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) fields[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
  };
  put32(8, static_cast<std::uint32_t>(world));
  put32(12, static_cast<std::uint32_t>(connecting));
  put32(16, static_cast<std::uint32_t>(accepting));
  return prove(token, label, {connecting_nonce, accepting_nonce, fields});
}

constexpr const char* kNoToken =
    "it does not know this job's token: a process of another job, or a rank started with "
    "another RINGLAB_JOB_TOKEN";

// What is wrong with a handshake frame, or "" if it is what `expect_kind`
// from a rank in [lowest, highest] to `me` should be.
std::string check_handshake(std::span<const std::byte, kHandshakeBytes> bytes,
                            FrameKind expect_kind, int me, int world, std::uint64_t job, int lowest,
                            int highest, int& source) {
  const FrameDecode decoded = decode_frame_header(bytes.first<kFrameHeaderBytes>());
  if (!decoded.header) return decoded.error;
  if (decoded.header->kind != expect_kind)
    return std::string("expected a ") + (expect_kind == FrameKind::Hello ? "hello" : "hello_ack") +
           " frame, got kind " + std::to_string(static_cast<int>(decoded.header->kind));
  source = decoded.header->source;
  const Hello hello = decode_hello(bytes.last<kHelloBytes>());
  if (hello.job_id != job)
    return "it belongs to another job (job id " + std::to_string(hello.job_id) + ", this job is " +
           std::to_string(job) + "): a process left over from an earlier run?";
  if (hello.world_size != static_cast<std::uint32_t>(world))
    return "it says WORLD_SIZE=" + std::to_string(hello.world_size) + " but this job has " +
           std::to_string(world);
  if (source < lowest || source > highest)
    return "it claims to be rank " + std::to_string(source) + ", expected one of " +
           std::to_string(lowest) + ".." + std::to_string(highest);
  if (hello.destination != me)
    return "it meant to reach rank " + std::to_string(hello.destination) + ", not rank " +
           std::to_string(me);
  return {};
}

}  // namespace

class Mesh::Impl {
 public:
  Impl(const WorldSpec& r, std::uint64_t job, Clock::time_point deadline, WaitReport* report)
      : r_(r),
        job_(job),
        deadline_(deadline),
        report_(report),
        io_(std::make_unique<asio::io_context>()),
        acceptor_(*io_),
        report_timer_(*io_),
        watch_timer_(*io_) {
    sockets_.reserve(static_cast<std::size_t>(r.world_size));
    for (int i = 0; i < r.world_size; ++i) sockets_.emplace_back(*io_);
    connected_.assign(static_cast<std::size_t>(r.world_size), false);
    watched_.assign(static_cast<std::size_t>(r.world_size), false);
    last_error_.assign(static_cast<std::size_t>(r.world_size), std::string());
    const auto endpoint =
        resolve(*io_, r.bind_addr, 0, "bind (RINGLAB_BIND_ADDR)").begin()->endpoint();
    ErrorCode error;
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error)
      throw CommError(me() + ": cannot listen on " + r.bind_addr + ": " + error.message() +
                      " (check RINGLAB_BIND_ADDR)");
  }

  int port() const { return acceptor_.local_endpoint().port(); }
  void watch_store(std::function<bool()> closed, std::function<bool()> answers) {
    store_closed_ = std::move(closed);
    store_answers_ = std::move(answers);
  }

  // Connects to every lower rank (addresses[q]) and accepts every higher one.
  Connected run(const std::vector<std::string>& addresses) {
    missing_ = r_.world_size - 1;
    // Resolved (and, in an open job, checked) before anything connects.
    const auto lower_ranks = resolve_lower_ranks(addresses);
    if (r_.rank + 1 < r_.world_size) spawn(accept_higher_ranks());
    for (int lower = 0; lower < r_.rank; ++lower)
      if (const auto& endpoints = lower_ranks[static_cast<std::size_t>(lower)])
        connect_to(lower, *endpoints);
    if (report_ && missing_ > 0) spawn(report_missing());
    if (missing_ > 0) spawn(watch_connections());
    while (missing_ > 0 && !escaped_ && Clock::now() < deadline_) io_->run_one_until(deadline_);
    finish();
    if (escaped_) {
      try {
        std::rethrow_exception(escaped_);
      } catch (const PeerError& error) {
        abort_connected(error.peer(), error.what());
        throw;
      }
    }
    if (missing_ > 0) {
      std::vector<int> absent = unconnected();
      std::string details;
      for (int q : absent)
        details +=
            "; rank " + std::to_string(q) + ": " +
            (q < r_.rank ? "connecting to " + addresses[static_cast<std::size_t>(q)] + " failed (" +
                               (last_error_[static_cast<std::size_t>(q)].empty()
                                    ? std::string("no answer")
                                    : last_error_[static_cast<std::size_t>(q)]) +
                               ")"
                         : std::string("never connected to this rank"));
      bool loopback_published = false;
      for (int q : absent)
        if (q < r_.rank) {
          const auto& address = addresses[static_cast<std::size_t>(q)];
          loopback_published |= address.rfind("127.", 0) == 0 || address.rfind("[::1]", 0) == 0;
        }
      const std::string message =
          me() + ": timed out after " + std::to_string(r_.timeout.count()) +
          " ms connecting to the other ranks: " + list_ranks(absent) + " did not show up" +
          details + ". Are they running with WORLD_SIZE=" + std::to_string(r_.world_size) +
          " and the same MASTER_ADDR/MASTER_PORT?" +
          (loopback_published ? " (Ranks on other hosts need RINGLAB_BIND_ADDR set to an address "
                                "the others can reach: a rank bound to loopback publishes a "
                                "loopback address.)"
                              : "");
      if (r_.rank != 0 && store_answers_ && !store_answers_()) {
        // They may be waiting for the store as this rank did.
        const std::string lost = me() +
                                 ": lost rank 0, which hosts the store: it did not answer at the "
                                 "end of the rendezvous (stopped or hung?), so the ranks still "
                                 "missing may be waiting for it too (" +
                                 message.substr(me().size() + 2) + ")";
        abort_connected(0, lost);
        throw PeerError(0, lost);
      }
      abort_connected(absent.front(), message);
      throw TimeoutError(message);
    }
    return {std::move(io_), std::move(sockets_)};
  }

 private:
  template <typename T>
  using awaitable = asio::awaitable<T>;

  // A connection that reached the listener and has not finished its hello.
  struct Stranger {
    Stranger(tcp::socket s, asio::io_context& io) : socket(std::move(s)), timer(io) {}
    tcp::socket socket;
    asio::steady_timer timer;  // the handshake timeout
    std::string peer;
    std::array<std::byte, kHandshakeBytes> bytes{};
    std::size_t got = 0;
    bool second_hello = false;  // its first was answered; the one with its proof is due
    bool over = false;          // adopted or rejected
  };

  // This rank's attempts to connect to a lower one.
  struct Outgoing {
    Outgoing(asio::io_context& io, int peer_rank) : socket(io), pause(io), peer(peer_rank) {}
    tcp::socket socket;
    asio::steady_timer pause;  // between attempts
    int peer;
  };

  std::string me() const { return "rank " + std::to_string(r_.rank); }

  std::vector<int> unconnected() const {
    std::vector<int> ranks;
    for (int q = 0; q < r_.world_size; ++q)
      if (q != r_.rank && !connected_[static_cast<std::size_t>(q)]) ranks.push_back(q);
    return ranks;
  }

  // Starts a coroutine on the mesh's io_context. An exception that escapes
  // it is kept, and run() stops and rethrows it.
  void spawn(awaitable<void> work) {
    asio::co_spawn(*io_, std::move(work), [this](std::exception_ptr error) {
      if (error && !escaped_) escaped_ = error;
    });
  }

  // ---- the lower rank's side: accept, then check each hello ----------------

  awaitable<void> accept_higher_ranks() {
    for (;;) {
      ErrorCode error;
      tcp::socket socket =
          co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
      if (finished_ || error == asio::error::operation_aborted) co_return;
      if (error) continue;
      auto stranger = std::make_shared<Stranger>(std::move(socket), *io_);
      stranger->peer = remote_of(stranger->socket);
      strangers_.push_back(stranger);
      if (!may_accept(r_, stranger->socket)) {
        reject(*stranger, "it connects from off loopback, and this job has no token "
                          "(RINGLAB_JOB_TOKEN is not set), so its ranks take connections from "
                          "loopback only");
        continue;
      }
      spawn(time_out_handshake(stranger));
      spawn(greet(stranger));
    }
  }

  awaitable<void> time_out_handshake(std::shared_ptr<Stranger> s) {
    s->timer.expires_after(r_.handshake_timeout);
    ErrorCode error;
    co_await s->timer.async_wait(asio::redirect_error(asio::use_awaitable, error));
    if (error || finished_) co_return;
    const std::string limit =
        " within the handshake timeout (" + std::to_string(r_.handshake_timeout.count()) + " ms)";
    reject(*s, s->got == 0 && !s->second_hello
                   ? "it sent nothing" + limit
                   : "it sent only " + std::to_string(s->got) + " of the " +
                         std::to_string(kHandshakeBytes) + " bytes of its " +
                         (s->second_hello ? "second hello (the one with its proof)" : "hello") +
                         limit);
  }

  // Reads one handshake frame into s->bytes, refusing it as soon as its first
  // bytes show it is garbage. False: the stranger was rejected (or the
  // rendezvous ended).
  awaitable<bool> read_handshake(std::shared_ptr<Stranger> s) {
    s->got = 0;
    while (s->got < kHandshakeBytes) {
      ErrorCode error;
      const std::size_t n = co_await s->socket.async_read_some(
          asio::buffer(s->bytes.data() + s->got, kHandshakeBytes - s->got),
          asio::redirect_error(asio::use_awaitable, error));
      if (finished_ || s->over) co_return false;
      s->got += n;
      if (s->got >= 4 && std::memcmp(s->bytes.data(), "RLTF", 4) != 0) {
        reject(*s, "bad magic " + hex_bytes(std::span(s->bytes).first(4)) +
                       " (expected RLTF): not a ringlab rank");
        co_return false;
      }
      if (error) {
        reject(*s, "it closed after " + std::to_string(s->got) + " of the " +
                       std::to_string(kHandshakeBytes) +
                       " handshake bytes (truncated hello: " + error.message() + ")");
        co_return false;
      }
    }
    co_return !finished_ && !s->over;
  }

  awaitable<void> greet(std::shared_ptr<Stranger> s) {
    if (!co_await read_handshake(s)) co_return;
    int source = -1;
    const std::string problem = check_handshake(s->bytes, FrameKind::Hello, r_.rank, r_.world_size,
                                                job_, r_.rank + 1, r_.world_size - 1, source);
    if (!problem.empty()) co_return reject(*s, problem);
    if (connected_[static_cast<std::size_t>(source)])
      co_return reject(
          *s, "rank " + std::to_string(source) +
                  " is already connected: two processes with RANK=" + std::to_string(source) + "?");

    // The answer, with this rank's challenge and its proof of the token.
    const Hello hello = decode_hello(std::span(s->bytes).last<kHelloBytes>());
    const Nonce challenge = fresh_nonce();
    Hello ack{static_cast<std::uint32_t>(r_.world_size), source, job_, challenge,
              rank_proof(r_.job_token, kAcceptingRankProof, hello.nonce, challenge, job_,
                         r_.world_size, source, r_.rank)};
    const auto ack_bytes = encode_handshake(FrameKind::HelloAck, r_.rank, ack);
    ErrorCode error;
    co_await asio::async_write(s->socket, asio::buffer(ack_bytes),
                               asio::redirect_error(asio::use_awaitable, error));
    if (finished_ || s->over) co_return;
    if (error)
      co_return reject(*s, "its connection failed during the handshake (" + error.message() + ")");

    // Its second hello: the same, with its proof of the token; the connection
    // is this rank's once that checks out.
    s->second_hello = true;
    if (!co_await read_handshake(s)) co_return;
    int again = -1;
    const std::string changed = check_handshake(s->bytes, FrameKind::Hello, r_.rank, r_.world_size,
                                                job_, source, source, again);
    if (!changed.empty()) co_return reject(*s, "its second hello: " + changed);
    const Hello proven = decode_hello(std::span(s->bytes).last<kHelloBytes>());
    if (proven.nonce != hello.nonce ||
        !same_proof(proven.proof, rank_proof(r_.job_token, kConnectingRankProof, hello.nonce,
                                             challenge, job_, r_.world_size, source, r_.rank)))
      co_return reject(*s, kNoToken);
    if (connected_[static_cast<std::size_t>(source)])
      co_return reject(*s, "rank " + std::to_string(source) + " is already connected");
    s->over = true;
    s->timer.cancel();
    adopt(source, std::move(s->socket));
  }

  void reject(Stranger& s, const std::string& why) {
    if (s.over) return;
    s.over = true;
    log_line(me() + ": rejected the connection from " + s.peer + ": " + why +
             "; the rendezvous goes on");
    ErrorCode ignored;
    s.timer.cancel();
    s.socket.close(ignored);
  }

  // ---- the higher rank's side: connect, say hello, check the answer --------

  // The endpoints of each lower rank's address ("host:port"; [v6]:port),
  // or none where it does not resolve (last_error_ says why, and the
  // rendezvous times out naming it). A rank without a token refuses an
  // address off loopback here (loopback.hpp), whatever the store says.
  std::vector<std::optional<tcp::resolver::results_type>> resolve_lower_ranks(
      const std::vector<std::string>& addresses) {
    std::vector<std::optional<tcp::resolver::results_type>> found(
        static_cast<std::size_t>(r_.rank));
    for (int peer = 0; peer < r_.rank; ++peer) {
      const std::string& address = addresses[static_cast<std::size_t>(peer)];
      const auto colon = address.rfind(':');
      int port = 0;
      if (colon != std::string::npos)
        std::from_chars(address.data() + colon + 1, address.data() + address.size(), port);
      std::string host = address.substr(0, colon == std::string::npos ? 0 : colon);
      if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
      try {
        found[static_cast<std::size_t>(peer)] =
            resolve(*io_, host, port, "rank " + std::to_string(peer));
      } catch (const CommError& error) {
        last_error_[static_cast<std::size_t>(peer)] = error.what();
        continue;
      }
      require_loopback_peer(r_, peer, address, *found[static_cast<std::size_t>(peer)]);
    }
    return found;
  }

  void connect_to(int peer, const tcp::resolver::results_type& endpoints) {
    auto out = std::make_shared<Outgoing>(*io_, peer);
    outgoing_.push_back(out);
    spawn(handshake_with(out, endpoints));
  }

  // Retries (kConnectRetry apart) while the lower rank is not listening yet
  // or answers wrongly, until the rendezvous ends.
  awaitable<void> handshake_with(std::shared_ptr<Outgoing> out,
                                 tcp::resolver::results_type endpoints) {
    Hello mine{static_cast<std::uint32_t>(r_.world_size), out->peer, job_};
    std::array<std::byte, kHandshakeBytes> ack{};
    bool complained = false;
    for (;;) {
      ErrorCode error;
      std::string failed;
      co_await asio::async_connect(out->socket, endpoints,
                                   asio::redirect_error(asio::use_awaitable, error));
      if (finished_) co_return;
      if (error) failed = error.message();
      mine.nonce = fresh_nonce();
      mine.proof = {};
      if (failed.empty()) {
        const auto hello = encode_handshake(FrameKind::Hello, r_.rank, mine);
        co_await asio::async_write(out->socket, asio::buffer(hello),
                                   asio::redirect_error(asio::use_awaitable, error));
        if (finished_) co_return;
        if (error) failed = error.message();
      }
      if (failed.empty()) {
        co_await asio::async_read(out->socket, asio::buffer(ack),
                                  asio::redirect_error(asio::use_awaitable, error));
        if (finished_) co_return;
        if (error) failed = "the handshake was cut off (" + error.message() + ")";
      }
      if (failed.empty()) {
        int source = -1;
        std::string problem = check_handshake(ack, FrameKind::HelloAck, r_.rank, r_.world_size,
                                              job_, out->peer, out->peer, source);
        const Hello answer = decode_hello(std::span(ack).last<kHelloBytes>());
        if (problem.empty() &&
            !same_proof(answer.proof,
                        rank_proof(r_.job_token, kAcceptingRankProof, mine.nonce, answer.nonce,
                                   job_, r_.world_size, r_.rank, out->peer)))
          problem = kNoToken;
        if (problem.empty()) {
          // The second hello carries this rank's proof; the lower rank takes
          // the connection once it checks out (it can only fail to if that
          // rank has another token, and then its own proof would have failed
          // here first).
          mine.proof = rank_proof(r_.job_token, kConnectingRankProof, mine.nonce, answer.nonce,
                                  job_, r_.world_size, r_.rank, out->peer);
          const auto proven = encode_handshake(FrameKind::Hello, r_.rank, mine);
          co_await asio::async_write(out->socket, asio::buffer(proven),
                                     asio::redirect_error(asio::use_awaitable, error));
          if (finished_) co_return;
          if (!error) co_return adopt(out->peer, std::move(out->socket));
          problem = "the handshake was cut off (" + error.message() + ")";
        }
        if (!complained)  // once, not every retry
          log_line(me() + ": the listener published for rank " + std::to_string(out->peer) +
                   " answered with a bad handshake: " + problem + "; retrying");
        complained = true;
        failed = "bad handshake: " + problem;
      }
      last_error_[static_cast<std::size_t>(out->peer)] = failed;
      ErrorCode ignored;
      out->socket.close(ignored);
      out->pause.expires_after(kConnectRetry);
      co_await out->pause.async_wait(asio::redirect_error(asio::use_awaitable, error));
      if (error || finished_) co_return;
    }
  }

  // ---- both sides ------------------------------------------------------------

  void adopt(int peer, tcp::socket socket) {
    ErrorCode ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    sockets_[static_cast<std::size_t>(peer)] = std::move(socket);
    connected_[static_cast<std::size_t>(peer)] = true;
    watched_[static_cast<std::size_t>(peer)] = true;
    --missing_;
  }

  // Rank 0 says, every few seconds, which ranks have not connected yet.
  awaitable<void> report_missing() {
    for (;;) {
      report_timer_.expires_at(report_->next_due());
      ErrorCode error;
      co_await report_timer_.async_wait(asio::redirect_error(asio::use_awaitable, error));
      if (error || finished_) co_return;
      report_->report_if_due(unconnected());
    }
  }

  // Looks at the connections made so far, and at the store's, every
  // kWatchInterval; news of a failure ends run() with a PeerError.
  awaitable<void> watch_connections() {
    for (;;) {
      watch_timer_.expires_after(kWatchInterval);
      ErrorCode error;
      co_await watch_timer_.async_wait(asio::redirect_error(asio::use_awaitable, error));
      if (error || finished_) co_return;
      for (int q = 0; q < r_.world_size; ++q) {
        if (!watched_[static_cast<std::size_t>(q)]) continue;
        const ConnectionNews news =
            look_at_connection(sockets_[static_cast<std::size_t>(q)].native_handle());
        const std::string rank = "rank " + std::to_string(q);
        switch (news.kind) {
          case ConnectionNews::Kind::Quiet:
            break;
          case ConnectionNews::Kind::Talking:  // it finished its rendezvous
            watched_[static_cast<std::size_t>(q)] = false;
            break;
          case ConnectionNews::Kind::Closed:
            throw PeerError(q, me() + ": lost " + rank +
                                   (q == 0 ? ", which hosts the store," : "") +
                                   " during the rendezvous (its connection closed: " + news.reason +
                                   "): " + rank + " probably exited or crashed");
          case ConnectionNews::Kind::Aborted: {
            const int culprit =
                news.culprit >= 0 && news.culprit < r_.world_size && news.culprit != r_.rank
                    ? news.culprit
                    : q;
            throw PeerError(culprit, abort_message(r_.rank, q, culprit, news.reason));
          }
        }
      }
      if (store_closed_ && r_.rank != 0 && store_closed_())
        throw PeerError(0, me() +
                               ": lost rank 0, which hosts the store, during the rendezvous "
                               "(its connection to the store closed): rank 0 probably exited "
                               "or crashed");
    }
  }

  // Tells the peers connected so far that this rendezvous failed because of
  // culprit (they name it too, rather than this rank).
  void abort_connected(int culprit, const std::string& why) {
    for (int q = 0; q < r_.world_size; ++q)
      if (connected_[static_cast<std::size_t>(q)] && q != culprit)
        send_abort(sockets_[static_cast<std::size_t>(q)].native_handle(), r_.rank, culprit, why);
  }

  // Stops listening, connecting, watching and reporting, and drops every
  // unfinished handshake.
  void finish() {
    finished_ = true;
    ErrorCode ignored;
    acceptor_.close(ignored);
    report_timer_.cancel();
    watch_timer_.cancel();
    for (auto& out : outgoing_) {
      out->pause.cancel();
      if (out->socket.is_open()) out->socket.close(ignored);
    }
    for (auto& s : strangers_) {
      s->timer.cancel();
      if (s->over) continue;
      s->over = true;
      log_line(me() + ": closed the connection from " + s->peer +
               ", which had not finished its handshake when the rendezvous ended");
      s->socket.close(ignored);
    }
    // Let the cancelled coroutines run to their end (they see finished_), so
    // none refers to this object afterwards.
    io_->restart();
    io_->poll();
    strangers_.clear();
    outgoing_.clear();
  }

  const WorldSpec& r_;
  std::uint64_t job_;
  Clock::time_point deadline_;
  WaitReport* report_;
  std::unique_ptr<asio::io_context> io_;
  tcp::acceptor acceptor_;
  asio::steady_timer report_timer_;
  asio::steady_timer watch_timer_;
  std::function<bool()> store_closed_, store_answers_;
  std::vector<tcp::socket> sockets_;
  std::vector<bool> connected_;
  std::vector<bool> watched_;  // connected, and not yet seen talking
  std::vector<std::string> last_error_;
  std::vector<std::shared_ptr<Stranger>> strangers_;
  std::vector<std::shared_ptr<Outgoing>> outgoing_;
  int missing_ = 0;
  bool finished_ = false;
  std::exception_ptr escaped_;  // from a coroutine: run() rethrows it
};

std::vector<int> Mesh::Connected::release_descriptors() {
  std::vector<int> descriptors;
  for (auto& socket : sockets) descriptors.push_back(socket.is_open() ? socket.release() : -1);
  return descriptors;
}

Mesh::Mesh(const WorldSpec& r, std::uint64_t job_id, Clock::time_point deadline,
           WaitReport* report)
    : impl_(std::make_unique<Impl>(r, job_id, deadline, report)) {}
Mesh::~Mesh() = default;
int Mesh::port() const { return impl_->port(); }
Mesh::Connected Mesh::run(const std::vector<std::string>& addresses) {
  return impl_->run(addresses);
}
void Mesh::watch_store(std::function<bool()> closed, std::function<bool()> answers) {
  impl_->watch_store(std::move(closed), std::move(answers));
}

}  // namespace ringlab::tcp
