// The listener and the handshakes of the rendezvous (see mesh.hpp).
#include "transport/tcp/mesh.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <sstream>

#include "transport/tcp/framing.hpp"
#include "transport/tcp/log.hpp"
#include "transport/tcp/socket_util.hpp"

namespace ringlab::tcp {

std::string list_ranks(const std::vector<int>& ranks) {
  std::ostringstream out;
  out << (ranks.size() == 1 ? "rank " : "ranks ");
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) out << (i + 1 == ranks.size() ? " and " : ", ");
    out << ranks[i];
  }
  return out.str();
}

namespace {

constexpr std::size_t kHandshakeBytes = kFrameHeaderBytes + kHelloBytes;
constexpr auto kConnectRetry = std::chrono::milliseconds(20);

std::array<std::byte, kHandshakeBytes> encode_handshake(FrameKind kind, int source,
                                                        const Hello& hello) {
  std::array<std::byte, kHandshakeBytes> out{};
  const auto header = encode_frame_header({kind, source, 0, kHelloBytes});
  const auto body = encode_hello(hello);
  std::copy(header.begin(), header.end(), out.begin());
  std::copy(body.begin(), body.end(), out.begin() + kFrameHeaderBytes);
  return out;
}

// What is wrong with a handshake frame, or "" if it is what `expect_kind`
// from a rank in [lowest, highest] to `me` should be.
std::string check_handshake(std::span<const std::byte, kHandshakeBytes> bytes,
                            FrameKind expect_kind, int me, int world, std::uint64_t job,
                            int lowest, int highest, int& source) {
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
  Impl(const Rendezvous& r, std::uint64_t job, Clock::time_point deadline)
      : r_(r), job_(job), deadline_(deadline), io_(std::make_unique<asio::io_context>()),
        acceptor_(*io_) {
    sockets_.reserve(static_cast<std::size_t>(r.world_size));
    for (int i = 0; i < r.world_size; ++i) sockets_.emplace_back(*io_);
    connected_.assign(static_cast<std::size_t>(r.world_size), false);
    last_error_.assign(static_cast<std::size_t>(r.world_size), std::string());
    const auto endpoint = resolve(*io_, r.bind_addr, 0, "bind (RINGLAB_BIND_ADDR)").begin()->endpoint();
    ErrorCode error;
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.bind(endpoint, error);
    if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error)
      throw CommError(me() + ": cannot listen on " + r.bind_addr + ": " + error.message() +
                      " (check RINGLAB_BIND_ADDR)");
  }

  int port() const { return acceptor_.local_endpoint().port(); }

  // Connects to every lower rank (addresses[q]) and accepts every higher one.
  Connected run(const std::vector<std::string>& addresses) {
    missing_ = r_.world_size - 1;
    if (r_.rank + 1 < r_.world_size) accept_next();
    for (int lower = 0; lower < r_.rank; ++lower) connect_to(lower, addresses[static_cast<std::size_t>(lower)]);
    while (missing_ > 0 && Clock::now() < deadline_) io_->run_one_until(deadline_);
    finish();
    if (missing_ > 0) {
      std::vector<int> absent;
      std::string details;
      for (int q = 0; q < r_.world_size; ++q) {
        if (q == r_.rank || connected_[static_cast<std::size_t>(q)]) continue;
        absent.push_back(q);
        details += "; rank " + std::to_string(q) + ": " +
                   (q < r_.rank ? "connecting to " + addresses[static_cast<std::size_t>(q)] +
                                      " failed (" +
                                      (last_error_[static_cast<std::size_t>(q)].empty()
                                           ? std::string("no answer")
                                           : last_error_[static_cast<std::size_t>(q)]) +
                                      ")"
                                : std::string("never connected to this rank"));
      }
      bool loopback_published = false;
      for (int q : absent)
        if (q < r_.rank) {
          const auto& address = addresses[static_cast<std::size_t>(q)];
          loopback_published |= address.rfind("127.", 0) == 0 || address.rfind("[::1]", 0) == 0;
        }
      throw TimeoutError(me() + ": timed out after " + std::to_string(r_.timeout.count()) +
                         " ms connecting to the other ranks: " + list_ranks(absent) +
                         " did not show up" + details +
                         ". Are they running with WORLD_SIZE=" + std::to_string(r_.world_size) +
                         " and the same MASTER_ADDR/MASTER_PORT?" +
                         (loopback_published
                              ? " (Ranks on other hosts need RINGLAB_BIND_ADDR set to an address "
                                "the others can reach: a rank bound to loopback publishes a "
                                "loopback address.)"
                              : ""));
    }
    return {std::move(io_), std::move(sockets_)};
  }

 private:
  // A connection that reached the listener and has not finished its hello.
  struct Stranger {
    explicit Stranger(asio::io_context& io) : socket(io), timer(io) {}
    tcp::socket socket;
    asio::steady_timer timer;
    std::string peer;
    std::array<std::byte, kHandshakeBytes> bytes{};
    std::size_t got = 0;
    std::array<std::byte, kHandshakeBytes> ack{};
    bool over = false;
  };

  std::string me() const { return "rank " + std::to_string(r_.rank); }

  void accept_next() {
    auto stranger = std::make_shared<Stranger>(*io_);
    acceptor_.async_accept(stranger->socket, [this, stranger](ErrorCode error) {
      if (finished_ || error == asio::error::operation_aborted) return;
      if (!error) greet(stranger);
      accept_next();
    });
  }

  void reject(const std::shared_ptr<Stranger>& s, const std::string& why) {
    if (s->over) return;
    s->over = true;
    log_line(me() + ": rejected the connection from " + s->peer + ": " + why +
             "; the rendezvous goes on");
    ErrorCode ignored;
    s->timer.cancel();
    s->socket.close(ignored);
  }

  void greet(const std::shared_ptr<Stranger>& s) {
    s->peer = remote_of(s->socket);
    strangers_.push_back(s);
    s->timer.expires_after(r_.handshake_timeout);
    s->timer.async_wait([this, s](ErrorCode error) {
      if (error || finished_) return;
      reject(s, s->got == 0 ? "it sent nothing within the handshake timeout (" +
                                  std::to_string(r_.handshake_timeout.count()) + " ms)"
                            : "it sent only " + std::to_string(s->got) + " of the " +
                                  std::to_string(kHandshakeBytes) +
                                  " handshake bytes within the handshake timeout (" +
                                  std::to_string(r_.handshake_timeout.count()) + " ms)");
    });
    read_hello(s);
  }

  void read_hello(const std::shared_ptr<Stranger>& s) {
    s->socket.async_read_some(
        asio::buffer(s->bytes.data() + s->got, kHandshakeBytes - s->got),
        [this, s](ErrorCode error, std::size_t n) {
          if (finished_ || s->over) return;
          s->got += n;
          // Refuse garbage as soon as its first bytes show it.
          if (s->got >= 4 && std::memcmp(s->bytes.data(), "RLTF", 4) != 0)
            return reject(s, "bad magic " + hex_bytes(std::span(s->bytes).first(4)) +
                                 " (expected RLTF): not a ringlab rank");
          if (error)
            return reject(s, "it closed after " + std::to_string(s->got) + " of the " +
                                 std::to_string(kHandshakeBytes) +
                                 " handshake bytes (truncated hello: " + error.message() + ")");
          if (s->got < kHandshakeBytes) return read_hello(s);
          int source = -1;
          const std::string problem = check_handshake(s->bytes, FrameKind::Hello, r_.rank,
                                                      r_.world_size, job_, r_.rank + 1,
                                                      r_.world_size - 1, source);
          if (!problem.empty()) return reject(s, problem);
          if (connected_[static_cast<std::size_t>(source)])
            return reject(s, "rank " + std::to_string(source) +
                                 " is already connected: two processes with RANK=" +
                                 std::to_string(source) + "?");
          s->ack = encode_handshake(FrameKind::HelloAck, r_.rank,
                                    {static_cast<std::uint32_t>(r_.world_size), source, job_});
          asio::async_write(s->socket, asio::buffer(s->ack),
                            [this, s, source](ErrorCode write_error, std::size_t) {
                              if (finished_ || s->over) return;
                              if (write_error)
                                return reject(s, "its connection failed during the handshake (" +
                                                     write_error.message() + ")");
                              if (connected_[static_cast<std::size_t>(source)])
                                return reject(s, "rank " + std::to_string(source) +
                                                     " is already connected");
                              s->over = true;
                              s->timer.cancel();
                              adopt(source, std::move(s->socket));
                            });
        });
  }

  void adopt(int peer, tcp::socket socket) {
    ErrorCode ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    sockets_[static_cast<std::size_t>(peer)] = std::move(socket);
    connected_[static_cast<std::size_t>(peer)] = true;
    --missing_;
  }

  // The higher rank's side: connect (retrying while the lower rank is not yet
  // listening), send hello, check the hello_ack.
  struct Outgoing {
    Outgoing(asio::io_context& io, int peer_rank) : socket(io), timer(io), peer(peer_rank) {}
    tcp::socket socket;
    asio::steady_timer timer;
    int peer;
    tcp::resolver::results_type endpoints;
    std::array<std::byte, kHandshakeBytes> hello{};
    std::array<std::byte, kHandshakeBytes> ack{};
    bool complained = false;
  };

  void connect_to(int peer, const std::string& address) {
    auto out = std::make_shared<Outgoing>(*io_, peer);
    const auto colon = address.rfind(':');
    int port = 0;
    if (colon != std::string::npos)
      std::from_chars(address.data() + colon + 1, address.data() + address.size(), port);
    std::string host = address.substr(0, colon == std::string::npos ? 0 : colon);
    if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
    try {
      out->endpoints = resolve(*io_, host, port, "rank " + std::to_string(peer));
    } catch (const CommError& error) {
      last_error_[static_cast<std::size_t>(peer)] = error.what();
      return;
    }
    out->hello = encode_handshake(FrameKind::Hello, r_.rank,
                                  {static_cast<std::uint32_t>(r_.world_size), peer, job_});
    attempt(out);
  }

  void retry(const std::shared_ptr<Outgoing>& out, const std::string& why) {
    last_error_[static_cast<std::size_t>(out->peer)] = why;
    ErrorCode ignored;
    out->socket.close(ignored);
    out->timer.expires_after(kConnectRetry);
    out->timer.async_wait([this, out](ErrorCode error) {
      if (!error && !finished_) attempt(out);
    });
  }

  void attempt(const std::shared_ptr<Outgoing>& out) {
    asio::async_connect(out->socket, out->endpoints, [this, out](ErrorCode error, const tcp::endpoint&) {
      if (finished_) return;
      if (error) return retry(out, error.message());
      asio::async_write(out->socket, asio::buffer(out->hello), [this, out](ErrorCode write_error, std::size_t) {
        if (finished_) return;
        if (write_error) return retry(out, write_error.message());
        asio::async_read(out->socket, asio::buffer(out->ack), [this, out](ErrorCode read_error, std::size_t) {
          if (finished_) return;
          if (read_error)
            return retry(out, "the handshake was cut off (" + read_error.message() + ")");
          int source = -1;
          const std::string problem = check_handshake(out->ack, FrameKind::HelloAck, r_.rank,
                                                      r_.world_size, job_, out->peer, out->peer,
                                                      source);
          if (!problem.empty()) {
            if (!out->complained)  // once, not every retry
              log_line(me() + ": the listener published for rank " + std::to_string(out->peer) +
                       " answered with a bad handshake: " + problem + "; retrying");
            out->complained = true;
            return retry(out, "bad handshake: " + problem);
          }
          adopt(out->peer, std::move(out->socket));
        });
      });
    });
  }

  // Stops listening and drops every unfinished handshake.
  void finish() {
    finished_ = true;
    ErrorCode ignored;
    acceptor_.close(ignored);
    for (auto& s : strangers_) {
      if (s->over) continue;
      s->over = true;
      log_line(me() + ": closed the connection from " + s->peer +
               ", which had not finished its handshake when the rendezvous ended");
      s->timer.cancel();
      s->socket.close(ignored);
    }
    strangers_.clear();
    // Let the cancelled handlers run (they see finished_ and stop), so no
    // operation refers to this object afterwards.
    io_->restart();
    io_->poll();
  }

  const Rendezvous& r_;
  std::uint64_t job_;
  Clock::time_point deadline_;
  std::unique_ptr<asio::io_context> io_;
  tcp::acceptor acceptor_;
  std::vector<tcp::socket> sockets_;
  std::vector<bool> connected_;
  std::vector<std::string> last_error_;
  std::vector<std::shared_ptr<Stranger>> strangers_;
  int missing_ = 0;
  bool finished_ = false;
};

Mesh::Mesh(const Rendezvous& r, std::uint64_t job_id, Clock::time_point deadline)
    : impl_(std::make_unique<Impl>(r, job_id, deadline)) {}
Mesh::~Mesh() = default;
int Mesh::port() const { return impl_->port(); }
Mesh::Connected Mesh::run(const std::vector<std::string>& addresses) {
  return impl_->run(addresses);
}

}  // namespace ringlab::tcp
