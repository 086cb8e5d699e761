// The store's server (rank 0): a map of keys to byte strings served over TCP
// on one background thread running a Boost.Asio io_context.
//
// Each connection is a Session, a coroutine that reads top to bottom: the
// hello and the proofs of the job token (token_proof.hpp: the store proves it
// knows the token, then the client; nothing is served to a client that has
// not), then one request after another, each answered before the next is
// read. A get/wait on missing keys parks the session until the keys appear
// (any set/add/compare_set re-checks the parked ones) or its own timeout
// fires; meanwhile the session watches its socket, so a client that leaves is
// noticed at once and its wait and descriptor dropped.
//
// Nothing a client sends can take the store down:
//  - Memory: a body is read in chunks, and memory is taken as bytes arrive,
//    not as the header claims. Keys and values held plus bodies being
//    received stay within StoreLimits::max_total_bytes; a request past a
//    limit is read to its end, discarded, and answered with an error saying
//    which limit, and the connection goes on. Values are shared with the
//    replies that carry them, so a get copies nothing.
//  - Time: every phase of a connection has a watchdog: the hello must arrive
//    within the handshake timeout, a request within request_timeout of its
//    first byte, a reply be read within request_timeout; a connection idle
//    after hello is told so (a Closing notice) and closed, and its client
//    reconnects when it needs the store again.
//  - Descriptors: at most max_connections; a newcomer beyond that, or one
//    that finds the process out of descriptors (EMFILE), displaces the oldest
//    connection that has not said a byte, else is refused (at the limit) or
//    waits while accepting backs off (out of descriptors): never a busy loop.
//  - Exceptions: one escaping a request (std::bad_alloc included) becomes
//    that request's error reply; one escaping a session ends that session;
//    one escaping a handler is logged and the io_context runs on.
// Garbage (wrong magic, bad version, absurd length, a request before hello)
// is logged on stderr (at most a few lines a second) and that connection is
// closed; the others carry on.
#include <algorithm>
#include <charconv>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "store/asio.hpp"
#include "store/log.hpp"
#include "store/protocol.hpp"
#include "store/socket_util.hpp"
#include "store/store.hpp"
#include "store/token_proof.hpp"

namespace ringlab::store {

namespace {

template <typename T>
using awaitable = asio::awaitable<T>;
using Value = std::shared_ptr<const std::string>;

// A hello's body is a few dozen bytes; before it the store takes no more.
constexpr std::size_t kMaxHelloBody = 256;
// Bodies are read (and memory taken) this much at a time at least.
constexpr std::size_t kBodyChunk = 64 << 10;
// How long a connection told it is idle may take to close its end.
constexpr auto kGoodbyeLinger = std::chrono::seconds(1);
// Accepting backs off this long at first when the process is out of
// descriptors, doubling up to the second figure.
constexpr auto kFirstBackoff = std::chrono::milliseconds(10);
constexpr auto kLongestBackoff = std::chrono::milliseconds(500);
// A connection that has said nothing for this long may give its place to a
// newcomer when the store is full (a client says hello as soon as it is
// connected; a newcomer is not to be mistaken for a silent one).
constexpr auto kSilentGrace = std::chrono::milliseconds(100);
// Log lines about rejected connections, at most this many a second.
constexpr int kLinesPerSecond = 5;

Value text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }
template <std::size_t N>
Value text(const std::array<std::byte, N>& bytes) {
  return text(std::string(reinterpret_cast<const char*>(bytes.data()), N));
}
std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// An answer: status, number, strings (shared with the map).
struct Reply {
  StoreStatus status = StoreStatus::Ok;
  std::int64_t number = 0;
  std::vector<Value> strings;
};

Reply error_reply(const std::string& why) { return {StoreStatus::Error, 0, {text(why)}}; }

// The bytes of keys and values held, and of request bodies being received.
class Budget {
 public:
  explicit Budget(std::size_t limit) : limit_(limit) {}
  std::size_t limit() const { return limit_; }
  std::size_t stored() const { return stored_; }
  std::size_t receiving() const { return receiving_; }
  bool fits(std::size_t more) const { return stored_ + receiving_ + more <= limit_; }
  bool take(std::size_t bytes) {
    if (!fits(bytes)) return false;
    receiving_ += bytes;
    return true;
  }
  void give_back(std::size_t bytes) { receiving_ -= bytes; }
  void store(std::size_t bytes) { stored_ += bytes; }
  void unstore(std::size_t bytes) { stored_ -= bytes; }

 private:
  std::size_t limit_;
  std::size_t stored_ = 0;
  std::size_t receiving_ = 0;
};

// The budget taken by one request body; given back when it goes.
class Share {
 public:
  explicit Share(Budget& budget) : budget_(&budget) {}
  Share(Share&& other) noexcept : budget_(other.budget_), bytes_(std::exchange(other.bytes_, 0)) {}
  Share& operator=(Share&&) = delete;
  ~Share() { budget_->give_back(bytes_); }
  bool grow(std::size_t bytes) {
    if (!budget_->take(bytes)) return false;
    bytes_ += bytes;
    return true;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  Budget* budget_;
  std::size_t bytes_ = 0;
};

// A request as read. `refused` is not empty when it broke a limit: its body
// was read and thrown away, and that is the error to answer.
struct Request {
  StoreOp op{};
  std::int64_t number = 0;
  std::vector<std::string> args;
  Share held;
  std::string refused;
};

std::int64_t parse_counter(const std::string& value, bool& ok) {
  std::int64_t number = 0;
  auto [ptr, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  ok = error == std::errc() && ptr == value.data() + value.size();
  return number;
}

bool out_of_descriptors(const ErrorCode& error) {
  return error == asio::error::no_descriptors ||
         error == boost::system::errc::too_many_files_open_in_system ||
         error == asio::error::no_buffer_space || error == asio::error::no_memory;
}

class Session;

// A get/wait that found missing keys, parked until they exist or time runs out.
struct Waiter {
  std::shared_ptr<Session> session;
  StoreOp op;
  std::vector<std::string> keys;
  std::unique_ptr<asio::steady_timer> timer;  // none: it waits as long as its client stays
};

}  // namespace

class StoreServer::Impl {
 public:
  Impl(const std::string& bind_addr, int port, Duration handshake_timeout, StoreLimits limits,
       std::string job_token);
  ~Impl();

  int port() const { return port_; }
  Duration handshake_timeout() const { return handshake_timeout_; }
  const StoreLimits& limits() const { return limits_; }
  const std::string& job_token() const { return job_token_; }
  Budget& budget() { return budget_; }
  asio::io_context& io() { return io_; }
  const std::string& name() const { return name_; }

  // The answer to a request, or nullopt when a get/wait parked the session
  // (Session::answer() comes later). Never throws.
  std::optional<Reply> handle(const std::shared_ptr<Session>& session, Request& request);
  void forget(const std::shared_ptr<Session>& session);
  // Writes "NAME: LINE" to the log, at most kLinesPerSecond a second.
  void note(const std::string& line);

 private:
  awaitable<void> accept_connections();
  void serve(tcp::socket socket);
  bool evict_silent(const std::string& why);
  void refuse(tcp::socket& socket, const std::string& why);
  Reply answer(Request& request, const std::shared_ptr<Session>& session, bool& parked);
  void wake_waiters();
  bool all_present(const std::vector<std::string>& keys) const;
  Reply ready_answer(StoreOp op, const std::vector<std::string>& keys) const;
  void put(const std::string& key, Value value);
  void shut_down();

  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  asio::steady_timer backoff_{io_};
  int port_ = 0;
  std::string name_;  // "store at 127.0.0.1:29500"
  Duration handshake_timeout_;
  StoreLimits limits_;
  std::string job_token_;
  Budget budget_;
  std::map<std::string, Value, std::less<>> data_;
  std::list<Waiter> waiters_;
  std::list<std::shared_ptr<Session>> sessions_;  // oldest first
  bool stopping_ = false;
  Clock::time_point log_window_{};
  int log_lines_ = 0;
  int log_suppressed_ = 0;
  std::thread thread_;
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(StoreServer::Impl& server, tcp::socket socket)
      : server_(server),
        socket_(std::move(socket)),
        watchdog_(server.io()),
        wake_(server.io()),
        peer_(remote_of(socket_)),
        opened_(Clock::now()) {}

  // The whole life of the connection.
  awaitable<void> serve() {
    const StoreLimits& limits = server_.limits();
    // The hello and the proofs, all within the handshake timeout.
    const Duration handshake = server_.handshake_timeout();
    const auto handshake_deadline = deadline_after(handshake);
    watch(Phase::Hello, handshake, handshake_deadline);
    auto hello = co_await read_request(kMaxHelloBody, StoreOp::Hello);
    if (!hello) co_return;
    if (hello->args.size() != 1 || hello->args[0].size() != kNonceBytes) {
      drop("its hello carries no " + std::to_string(kNonceBytes) +
           "-byte challenge: a ringlab store client of another version?");
      co_return;
    }
    Nonce client_nonce{};
    std::copy_n(bytes_of(hello->args[0]).begin(), kNonceBytes, client_nonce.begin());
    hello.reset();  // its memory goes back to the budget
    const Nonce server_nonce = fresh_nonce();
    const std::string& token = server_.job_token();
    Reply challenge{
        StoreStatus::Ok,
        0,
        {text(server_nonce), text(prove(token, kStoreServerProof, {client_nonce, server_nonce}))}};
    if (!co_await send(challenge)) co_return;
    challenged_ = true;
    watch(Phase::Hello, handshake, handshake_deadline);
    auto auth = co_await read_request(kMaxHelloBody, StoreOp::Auth);
    if (!auth) co_return;
    const bool proven = auth->args.size() == 1 &&
                        same_proof(bytes_of(auth->args[0]),
                                   prove(token, kStoreClientProof, {client_nonce, server_nonce}));
    auth.reset();
    if (!proven) {
      const std::string why =
          "it does not know this job's token: a process of another job, or a rank started with "
          "another RINGLAB_JOB_TOKEN";
      co_await send(error_reply("the store refuses this connection: " + why));
      drop(why);
      co_return;
    }
    challenged_ = false;
    greeted_ = true;
    if (!co_await send({StoreStatus::Ok, 0, {}})) co_return;

    for (;;) {
      watch(Phase::Idle, limits.idle_timeout);
      auto request = co_await read_request(limits.max_request_bytes, std::nullopt);
      if (!request) co_return;
      unwatch(Phase::Working);
      std::optional<Reply> reply;
      if (!request->refused.empty())
        reply = error_reply(std::string(store_op_name(static_cast<std::uint16_t>(request->op))) +
                            ": " + request->refused);
      else
        reply = server_.handle(shared_from_this(), *request);
      request.reset();  // its memory goes back to the budget
      if (!reply) reply = co_await park();
      if (!reply || !co_await send(*reply)) co_return;
    }
  }

  // A parked get/wait's answer: the keys arrived, or its time ran out.
  void answer(Reply reply) {
    parked_reply_ = std::move(reply);
    wake_.cancel();
  }

  // Connected for a while, and not one byte received yet (read or waiting
  // to be read).
  bool silent() const {
    if (phase_ != Phase::Hello || received_ != 0 || closed_) return false;
    if (Clock::now() - opened_ < kSilentGrace) return false;
    ErrorCode error;
    return socket_.available(error) == 0 && !error;
  }

  // Logs why this connection goes, and closes it.
  void drop(const std::string& why) {
    if (closed_) return;
    server_.note("rejected the connection from " + peer_ + ": " + why);
    close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    ErrorCode ignored;
    watchdog_.cancel();
    wake_.cancel();
    socket_.close(ignored);
  }

 private:
  enum class Phase { Hello, Idle, Request, Working, Parked, Replying, Closing };

  // Arms the watchdog for this phase (a new phase disarms the previous one):
  // it fires at `deadline`, by default `limit` from now.
  void watch(Phase phase, Duration limit) { watch(phase, limit, deadline_after(limit)); }
  void watch(Phase phase, Duration limit, Clock::time_point deadline) {
    phase_ = phase;
    phase_limit_ = limit;
    const std::uint64_t generation = ++watch_generation_;
    watchdog_.expires_at(deadline);
    watchdog_.async_wait([self = shared_from_this(), generation](ErrorCode error) {
      if (error || generation != self->watch_generation_ || self->closed_) return;
      self->on_watchdog();
    });
  }
  void unwatch(Phase phase) {
    phase_ = phase;
    ++watch_generation_;
    watchdog_.cancel();
  }

  void on_watchdog() {
    const std::string within = " within " + std::to_string(phase_limit_.count()) + " ms";
    switch (phase_) {
      case Phase::Hello:
        if (received_ == 0) return drop("it sent no hello" + within);
        if (challenged_ && request_got_ == 0)
          return drop("it did not answer the store's challenge" + within);
        return drop("it sent only " + std::to_string(request_got_) + " of the " +
                    std::to_string(request_size_) + " bytes of its hello" + within);
      case Phase::Request:
        return drop("it sent only " + std::to_string(request_got_) + " of the " +
                    std::to_string(request_size_) + " bytes of its request" + within);
      case Phase::Replying:
        return drop("it did not read its reply" + within);
      case Phase::Idle:
        return say_goodbye();
      case Phase::Closing:
        return close();
      case Phase::Working:
      case Phase::Parked:
        return;
    }
  }

  // Idle after hello: a Closing notice, then our end of the stream shut; what
  // the client may still send is read and thrown away (it was not run, and
  // the notice tells it so) until it closes too.
  void say_goodbye() {
    const std::string why = "idle for " + std::to_string(phase_limit_.count()) + " ms";
    std::vector<std::byte> body = encode_strings({why});
    const auto header =
        encode_store_header({false, static_cast<std::uint16_t>(StoreStatus::Closing),
                             static_cast<std::uint32_t>(body.size()), 0});
    ErrorCode error;
    // The socket's send buffer is empty (every reply was written): this does
    // not block.
    asio::write(socket_, std::vector<asio::const_buffer>{asio::buffer(header), asio::buffer(body)},
                error);
    if (!error) socket_.shutdown(tcp::socket::shutdown_send, error);
    if (error) return close();
    watch(Phase::Closing, std::chrono::duration_cast<Duration>(kGoodbyeLinger));
  }

  awaitable<std::pair<ErrorCode, std::size_t>> read_some(asio::mutable_buffer buffer) {
    ErrorCode error;
    const std::size_t n =
        co_await socket_.async_read_some(buffer, asio::redirect_error(asio::use_awaitable, error));
    received_ += n;
    request_got_ += n;
    co_return std::pair{error, n};
  }

  // What the client still sends after the goodbye, until it closes.
  awaitable<void> drain() {
    std::array<std::byte, 512> sink;
    for (;;) {
      const auto [error, n] = co_await read_some(asio::buffer(sink));
      if (error) co_return close();
    }
  }

  // A read that ended early: says why, unless it was us who closed.
  void ended(const ErrorCode& error, std::size_t got, std::size_t of, const char* part) {
    if (closed_ || error == asio::error::operation_aborted) return close();
    if (got > 0)
      return drop("it closed after " + std::to_string(got) + " of " + std::to_string(of) + " " +
                  part + " bytes (truncated request)");
    if (challenged_)
      return drop("it closed without answering the store's challenge (a rank of another job?)");
    if (!greeted_) return drop("it closed without sending a hello");
    close();  // a client that finished
  }

  // Reads one request. `only`: the operation the client must send now (the
  // hello). nullopt: the connection is over (closed, dropped, or idle).
  awaitable<std::optional<Request>> read_request(std::size_t max_body,
                                                 std::optional<StoreOp> only) {
    StoreHeaderBytes header_bytes{};
    request_got_ = 0;
    request_size_ = kStoreHeaderBytes;
    while (request_got_ < kStoreHeaderBytes) {
      const auto [error, n] = co_await read_some(
          asio::buffer(header_bytes.data() + request_got_, kStoreHeaderBytes - request_got_));
      if (phase_ == Phase::Closing) {
        co_await drain();
        co_return std::nullopt;
      }
      if (n > 0 && phase_ == Phase::Idle) watch(Phase::Request, server_.limits().request_timeout);
      if (error) {
        ended(error, request_got_, kStoreHeaderBytes, "header");
        co_return std::nullopt;
      }
    }
    const StoreDecode decoded = decode_store_header(header_bytes, true);
    if (!decoded.header) {
      drop(decoded.error);
      co_return std::nullopt;
    }
    const StoreHeader& header = *decoded.header;
    Request request{
        static_cast<StoreOp>(header.code), header.number, {}, Share(server_.budget()), {}};
    if (only && request.op != *only) {
      drop(*only == StoreOp::Hello
               ? std::string("its first request was ") + store_op_name(header.code) +
                     ", not hello: not a ringlab store client?"
               : std::string("it answered the store's challenge with ") +
                     store_op_name(header.code) + ", not auth: not a ringlab store client?");
      co_return std::nullopt;
    }
    if (!only && (request.op == StoreOp::Hello || request.op == StoreOp::Auth)) {
      drop(std::string("it sent ") + store_op_name(header.code) + " again after its hello");
      co_return std::nullopt;
    }
    const std::size_t length = header.body_length;
    request_size_ = kStoreHeaderBytes + length;
    if (length > max_body) {
      if (!greeted_) {
        drop("its hello claims a body of " + std::to_string(length) + " bytes (at most " +
             std::to_string(max_body) + ")");
        co_return std::nullopt;
      }
      request.refused = "a request of " + std::to_string(length) +
                        " bytes is more than the store takes (" + std::to_string(max_body) +
                        " bytes, key and value together)";
    } else if (!server_.budget().fits(length)) {
      request.refused = full_message(length);
    }

    // The body: memory taken as it arrives, never more than it claimed.
    std::vector<std::byte> body;
    std::vector<std::byte> sink;  // where a refused body goes
    std::size_t got = 0;
    while (got < length) {
      std::size_t want = std::min(kBodyChunk, length - got);
      std::byte* into = nullptr;
      if (request.refused.empty()) {
        if (body.size() + want > body.capacity()) {
          const std::size_t capacity =
              std::min(length, std::max(body.size() + want, 2 * body.capacity()));
          if (!request.held.grow(capacity - body.capacity())) {
            request.refused = full_message(length);
          } else {
            try {
              body.reserve(capacity);
            } catch (const std::bad_alloc&) {
              request.refused = "the store is out of memory: it could not take the " +
                                std::to_string(length) + " bytes of this request";
            }
          }
        }
        if (request.refused.empty()) {
          body.resize(body.size() + want);
          into = body.data() + body.size() - want;
        } else {
          body = {};
        }
      }
      if (!into) {
        sink.resize(std::min<std::size_t>(want, 16 << 10));
        want = sink.size();
        into = sink.data();
      }
      const auto [error, n] = co_await read_some(asio::buffer(into, want));
      if (phase_ == Phase::Closing) {
        co_await drain();
        co_return std::nullopt;
      }
      got += n;
      if (into != sink.data() && n < want) body.resize(body.size() - (want - n));
      if (error) {
        ended(error, got, length, "body");
        co_return std::nullopt;
      }
    }
    if (!request.refused.empty()) co_return std::move(request);
    std::optional<std::vector<std::string>> args;
    try {
      args = decode_strings(body);
    } catch (const std::bad_alloc&) {
      request.refused = "the store is out of memory: it could not take the " +
                        std::to_string(length) + " bytes of this request";
      co_return std::move(request);
    }
    if (!args) {
      drop("its request body is not a list of length-prefixed strings");
      co_return std::nullopt;
    }
    request.args = std::move(*args);
    co_return std::move(request);
  }

  std::string full_message(std::size_t length) const {
    const Budget& budget = server_.budget();
    std::string others;
    if (budget.receiving() > 0)
      others = ", the requests being received (" + std::to_string(budget.receiving()) + " bytes)";
    return "the store is full: its keys and values (" + std::to_string(budget.stored()) +
           " bytes)" + others + " and this request (" + std::to_string(length) +
           " bytes) would pass its limit of " + std::to_string(budget.limit()) + " bytes";
  }

  // Writes a reply; false if the connection is over.
  awaitable<bool> send(const Reply& reply) {
    std::size_t body_length = 0;
    for (const Value& s : reply.strings) body_length += 4 + s->size();
    const StoreHeaderBytes header =
        encode_store_header({false, static_cast<std::uint16_t>(reply.status),
                             static_cast<std::uint32_t>(body_length), reply.number});
    std::vector<std::array<std::byte, 4>> lengths(reply.strings.size());
    std::vector<asio::const_buffer> buffers{asio::buffer(header)};
    for (std::size_t i = 0; i < reply.strings.size(); ++i) {
      const auto size = static_cast<std::uint32_t>(reply.strings[i]->size());
      for (int b = 0; b < 4; ++b) lengths[i][b] = static_cast<std::byte>((size >> (8 * b)) & 0xFF);
      buffers.push_back(asio::buffer(lengths[i]));
      buffers.push_back(asio::buffer(*reply.strings[i]));
    }
    watch(Phase::Replying, server_.limits().request_timeout);
    ErrorCode error;
    co_await asio::async_write(socket_, buffers, asio::redirect_error(asio::use_awaitable, error));
    if (error) {
      close();
      co_return false;
    }
    unwatch(Phase::Working);
    co_return true;
  }

  // Waits for a parked get/wait's answer while watching the socket: a client
  // that leaves (or breaks the one-request-at-a-time rule) ends the wait.
  awaitable<std::optional<Reply>> park() {
    unwatch(Phase::Parked);
    parked_reply_.reset();
    peer_stirred_ = false;
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](ErrorCode error) {
      if (error || self->phase_ != Phase::Parked) return;
      self->peer_stirred_ = true;
      self->wake_.cancel();
    });
    wake_.expires_at(Clock::time_point::max());
    ErrorCode ignored;
    co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    phase_ = Phase::Working;
    if (closed_) co_return std::nullopt;
    if (peer_stirred_) {
      const std::size_t pending = socket_.available(ignored);
      if (ignored || pending == 0)
        close();  // it left: its wait goes with it
      else
        drop("it sent another request while its get/wait was pending (one request at a time)");
      co_return std::nullopt;
    }
    socket_.cancel(ignored);  // the watch on the socket
    co_return std::move(parked_reply_);
  }

  StoreServer::Impl& server_;
  tcp::socket socket_;
  asio::steady_timer watchdog_;
  asio::steady_timer wake_;  // a parked get/wait sleeps on it
  std::string peer_;
  Clock::time_point opened_;
  Phase phase_ = Phase::Hello;
  Duration phase_limit_{0};
  std::uint64_t watch_generation_ = 0;
  bool challenged_ = false;  // its hello was answered; its proof is due
  bool greeted_ = false;     // it proved it knows the job token
  bool closed_ = false;
  bool peer_stirred_ = false;
  std::size_t received_ = 0;      // bytes, since the connection opened
  std::size_t request_got_ = 0;   // bytes of the request being read
  std::size_t request_size_ = 0;  // its size, as far as known
  std::optional<Reply> parked_reply_;
};

}  // namespace

StoreServer::Impl::Impl(const std::string& bind_addr, int port, Duration handshake_timeout,
                        StoreLimits limits, std::string job_token)
    : handshake_timeout_(handshake_timeout),
      limits_(limits),
      job_token_(std::move(job_token)),
      budget_(limits.max_total_bytes) {
  limits_.max_request_bytes = std::min<std::size_t>(limits_.max_request_bytes, kMaxStoreBody);
  const auto endpoints = resolve(io_, bind_addr, port, "store bind");
  ErrorCode error;
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error)
    throw CommError("rank 0 cannot host the store at " + to_string(endpoint) + ": " +
                    error.message() +
                    (error == asio::error::address_in_use
                         ? " (another job or a previous run still holds the port: pick another "
                           "MASTER_PORT)"
                         : " (check MASTER_PORT and RINGLAB_BIND_ADDR)"));
  port_ = acceptor_.local_endpoint().port();
  name_ = "store at " + to_string(acceptor_.local_endpoint());
  asio::co_spawn(io_, accept_connections(), [this](std::exception_ptr escaped) {
    if (!escaped || stopping_) return;
    try {
      std::rethrow_exception(escaped);
    } catch (const std::exception& e) {
      log_line(name_ + ": stopped accepting connections: " + e.what());
    }
  });
  thread_ = std::thread([this] {
    // An exception out of a handler is logged; the store runs on.
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        log_line(name_ + ": a request failed inside the store (" + e.what() +
                 "); it goes on serving the others");
      } catch (...) {
        log_line(name_ + ": a request failed inside the store; it goes on serving the others");
      }
    }
  });
}

StoreServer::Impl::~Impl() {
  io_.stop();
  thread_.join();
  // Let every session see its connection closed and end, so none outlives
  // this object; whatever is left when the time is up goes with io_.
  io_.restart();
  asio::post(io_, [this] { shut_down(); });
  io_.run_for(std::chrono::seconds(1));
  waiters_.clear();
  sessions_.clear();
}

void StoreServer::Impl::shut_down() {
  stopping_ = true;
  ErrorCode ignored;
  acceptor_.close(ignored);
  backoff_.cancel();
  for (auto& waiter : waiters_)
    if (waiter.timer) waiter.timer->cancel();
  for (auto& session : sessions_) session->close();
}

void StoreServer::Impl::note(const std::string& line) {
  const auto now = Clock::now();
  if (now - log_window_ >= std::chrono::seconds(1)) {
    if (log_suppressed_ > 0)
      log_line(name_ + ": " + std::to_string(log_suppressed_) +
               " more rejected connections in the last second (not shown)");
    log_window_ = now;
    log_lines_ = 0;
    log_suppressed_ = 0;
  }
  if (log_lines_ < kLinesPerSecond) {
    ++log_lines_;
    log_line(name_ + ": " + line);
  } else {
    ++log_suppressed_;
  }
}

awaitable<void> StoreServer::Impl::accept_connections() {
  Duration backoff = std::chrono::duration_cast<Duration>(kFirstBackoff);
  for (;;) {
    ErrorCode error;
    tcp::socket socket =
        co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, error));
    if (stopping_ || error == asio::error::operation_aborted) co_return;
    if (error) {
      if (out_of_descriptors(error) &&
          evict_silent("it had said nothing, and its descriptor went to a newer connection (" +
                       error.message() + ")"))
        continue;
      // Nothing to give up for it: wait, rather than fail the same accept again at once.
      note("cannot accept a connection (" + error.message() + ", " +
           std::to_string(sessions_.size()) + " open); trying again in " +
           std::to_string(backoff.count()) + " ms");
      backoff_.expires_after(backoff);
      co_await backoff_.async_wait(asio::redirect_error(asio::use_awaitable, error));
      if (stopping_) co_return;
      backoff = std::min(2 * backoff, std::chrono::duration_cast<Duration>(kLongestBackoff));
      continue;
    }
    backoff = std::chrono::duration_cast<Duration>(kFirstBackoff);
    if (static_cast<int>(sessions_.size()) >= limits_.max_connections &&
        !evict_silent("it had said nothing, and its place went to a newer connection (the "
                      "store serves at most " +
                      std::to_string(limits_.max_connections) + " at once)")) {
      refuse(socket, "the store serves at most " + std::to_string(limits_.max_connections) +
                         " connections at once, and they are all busy: try again later");
      continue;
    }
    serve(std::move(socket));
  }
}

void StoreServer::Impl::serve(tcp::socket socket) {
  ErrorCode ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto session = std::make_shared<Session>(*this, std::move(socket));
  sessions_.push_back(session);
  asio::co_spawn(io_, session->serve(), [this, session](std::exception_ptr escaped) {
    if (escaped) {
      try {
        std::rethrow_exception(escaped);
      } catch (const std::exception& e) {
        note(std::string("a connection failed inside the store (") + e.what() +
             "); the others go on");
      } catch (...) {
      }
    }
    session->close();
    forget(session);
    sessions_.remove(session);
  });
}

bool StoreServer::Impl::evict_silent(const std::string& why) {
  for (auto& session : sessions_)
    if (session->silent()) {
      session->drop(why);
      return true;
    }
  return false;
}

void StoreServer::Impl::refuse(tcp::socket& socket, const std::string& why) {
  note("refused a connection from " + remote_of(socket) + ": " + why);
  const std::vector<std::byte> body = encode_strings({why});
  const auto header = encode_store_header({false, static_cast<std::uint16_t>(StoreStatus::Error),
                                           static_cast<std::uint32_t>(body.size()), 0});
  ErrorCode ignored;
  socket.non_blocking(true, ignored);
  socket.send(std::vector<asio::const_buffer>{asio::buffer(header), asio::buffer(body)}, 0,
              ignored);
  socket.close(ignored);
}

bool StoreServer::Impl::all_present(const std::vector<std::string>& keys) const {
  for (const auto& key : keys)
    if (!data_.contains(key)) return false;
  return true;
}

Reply StoreServer::Impl::ready_answer(StoreOp op, const std::vector<std::string>& keys) const {
  if (op == StoreOp::Get) return {StoreStatus::Ok, 0, {data_.find(keys.front())->second}};
  return {};
}

void StoreServer::Impl::put(const std::string& key, Value value) {
  auto it = data_.find(key);
  if (it == data_.end()) {
    budget_.store(key.size() + value->size());
    data_.emplace(key, std::move(value));
    return;
  }
  budget_.unstore(it->second->size());
  budget_.store(value->size());
  it->second = std::move(value);
}

void StoreServer::Impl::wake_waiters() {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (all_present(it->keys)) {
      if (it->timer) it->timer->cancel();
      it->session->answer(ready_answer(it->op, it->keys));
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void StoreServer::Impl::forget(const std::shared_ptr<Session>& session) {
  waiters_.remove_if([&](Waiter& waiter) {
    if (waiter.session != session) return false;
    if (waiter.timer) waiter.timer->cancel();
    return true;
  });
}

std::optional<Reply> StoreServer::Impl::handle(const std::shared_ptr<Session>& session,
                                               Request& request) {
  const std::string op_name = store_op_name(static_cast<std::uint16_t>(request.op));
  try {
    bool parked = false;
    Reply reply = answer(request, session, parked);
    if (parked) return std::nullopt;
    return reply;
  } catch (const std::bad_alloc&) {
    return error_reply(op_name + ": the store is out of memory (it holds " +
                       std::to_string(budget_.stored()) + " bytes of keys and values)");
  } catch (const std::exception& e) {
    return error_reply(op_name + ": failed inside the store: " + e.what());
  }
}

Reply StoreServer::Impl::answer(Request& request, const std::shared_ptr<Session>& session,
                                bool& parked) {
  const StoreOp op = request.op;
  auto& args = request.args;
  const std::string op_name = store_op_name(static_cast<std::uint16_t>(op));
  auto fail = [&](const std::string& why) { return error_reply(op_name + ": " + why); };
  const auto need = [&](std::size_t n) -> std::optional<Reply> {
    if (args.size() == n) return std::nullopt;
    return fail("expected " + std::to_string(n) + " arguments, got " + std::to_string(args.size()));
  };
  // The keys: every argument of wait and check, the first of the others.
  const std::size_t keys = op == StoreOp::Wait || op == StoreOp::Check ? args.size()
                           : op == StoreOp::NumKeys || op == StoreOp::Hello || op == StoreOp::Auth
                               ? 0
                               : std::min<std::size_t>(args.size(), 1);
  for (std::size_t i = 0; i < keys; ++i)
    if (args[i].size() > limits_.max_key_bytes)
      return fail("a key of " + std::to_string(args[i].size()) +
                  " bytes is longer than the store takes (" +
                  std::to_string(limits_.max_key_bytes) + " bytes)");
  switch (op) {
    case StoreOp::Hello:
    case StoreOp::Auth:
      return fail("the connection has said hello already");
    case StoreOp::Set: {
      if (auto wrong = need(2)) return *wrong;
      put(args[0], text(std::move(args[1])));
      wake_waiters();
      return {};
    }
    case StoreOp::Add: {
      if (auto wrong = need(1)) return *wrong;
      std::int64_t value = 0;
      if (auto it = data_.find(args[0]); it != data_.end()) {
        bool ok = false;
        value = parse_counter(*it->second, ok);
        if (!ok) return fail("the value of key '" + args[0] + "' is not an integer");
      }
      std::int64_t sum = 0;
      if (__builtin_add_overflow(value, request.number, &sum))
        return fail("key '" + args[0] + "' holds " + std::to_string(value) + ", and adding " +
                    std::to_string(request.number) +
                    " would overflow a signed 64-bit integer (-9223372036854775808 to "
                    "9223372036854775807): the value is unchanged");
      put(args[0], text(std::to_string(sum)));
      wake_waiters();
      return {StoreStatus::Ok, sum, {}};
    }
    case StoreOp::CompareSet: {
      if (auto wrong = need(3)) return *wrong;
      auto it = data_.find(args[0]);
      if (it == data_.end()) {
        if (!args[1].empty())  // TCPStore answers the expected value when the key is absent.
          return {StoreStatus::Ok, 0, {text(std::move(args[1]))}};
        put(args[0], text(std::move(args[2])));
        wake_waiters();
        return {StoreStatus::Ok, 0, {data_.find(args[0])->second}};
      }
      if (*it->second == args[1]) put(args[0], text(std::move(args[2])));
      return {StoreStatus::Ok, 0, {data_.find(args[0])->second}};
    }
    case StoreOp::Get:
    case StoreOp::Wait: {
      if (op == StoreOp::Get)
        if (auto wrong = need(1)) return *wrong;
      if (all_present(args)) return ready_answer(op, args);
      auto& waiter = waiters_.emplace_back(Waiter{session, op, std::move(args), nullptr});
      const auto deadline = deadline_after(Duration(std::max<std::int64_t>(request.number, 0)));
      parked = true;
      if (deadline == Clock::time_point::max()) return {};  // as long as its client stays
      waiter.timer = std::make_unique<asio::steady_timer>(io_, deadline);
      waiter.timer->async_wait([this, session](ErrorCode error) {
        if (error) return;  // answered (cancelled) before the time ran out
        auto it = std::find_if(waiters_.begin(), waiters_.end(),
                               [&](const Waiter& w) { return w.session == session; });
        if (it == waiters_.end()) return;
        Reply timeout{StoreStatus::Timeout, 0, {}};
        for (const auto& key : it->keys)
          if (!data_.contains(key)) timeout.strings.push_back(text(key));
        waiters_.erase(it);
        session->answer(std::move(timeout));
      });
      return {};
    }
    case StoreOp::Check:
      return {StoreStatus::Ok, all_present(args) ? 1 : 0, {}};
    case StoreOp::Delete: {
      if (auto wrong = need(1)) return *wrong;
      auto it = data_.find(args[0]);
      if (it == data_.end()) return {StoreStatus::Ok, 0, {}};
      budget_.unstore(it->first.size() + it->second->size());
      data_.erase(it);
      return {StoreStatus::Ok, 1, {}};
    }
    case StoreOp::NumKeys:
      return {StoreStatus::Ok, static_cast<std::int64_t>(data_.size()), {}};
  }
  return fail("unknown operation");
}

StoreServer::StoreServer(const std::string& bind_addr, int port, Duration handshake_timeout,
                         StoreLimits limits, std::string job_token)
    : impl_(std::make_unique<Impl>(bind_addr, port, handshake_timeout, limits,
                                   std::move(job_token))) {}
StoreServer::~StoreServer() = default;
int StoreServer::port() const { return impl_->port(); }

}  // namespace ringlab::store
