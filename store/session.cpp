// A connection's life (session.hpp).
#include "store/session.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "store/budgeted_body.hpp"
#include "store/server_impl.hpp"
#include "store/token_proof.hpp"

namespace ringlab::store {

namespace {

// A hello's body is a few dozen bytes; before it the store takes no more.
constexpr std::size_t kMaxHelloBody = 256;
// How long a connection told it is idle may take to close its end.
constexpr auto kGoodbyeLinger = std::chrono::seconds(1);
// A connection that has said nothing for this long may give its place to a
// newcomer when the store is full (a client says hello as soon as it is
// connected; a newcomer is not to be mistaken for a silent one).
constexpr auto kSilentGrace = std::chrono::milliseconds(100);

template <std::size_t N>
Value text_of(const std::array<std::byte, N>& bytes) {
  return text(std::string(reinterpret_cast<const char*>(bytes.data()), N));
}
std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
}  // namespace

Session::Session(StoreServer::Impl& server, tcp::socket socket)
    : server_(server),
      socket_(std::move(socket)),
      watchdog_(server.io()),
      wake_(server.io()),
      peer_(remote_of(socket_)),
      opened_(Clock::now()) {}

awaitable<void> Session::serve() {
  if (!co_await greet()) co_return;
  const StoreLimits& limits = server_.limits();
  for (;;) {
    watch(Phase::Idle, limits.idle_timeout);
    auto request = co_await read_request(limits.max_request_bytes, std::nullopt);
    if (!request) co_return;
    unwatch(Phase::Working);
    std::optional<Reply> reply;
    if (!request->refused.empty())
      reply = error_reply(store_op_name(request->op) + ": " + request->refused);
    else
      reply = server_.handle(shared_from_this(), *request);
    request.reset();  // its memory goes back to the budget
    if (!reply) reply = co_await park();
    if (!reply || !co_await send(*reply)) co_return;
  }
}

// The hello and the proofs, all within the handshake timeout. False: the
// connection is over.
awaitable<bool> Session::greet() {
  const Duration handshake = server_.handshake_timeout();
  const auto deadline = deadline_after(handshake);
  watch(Phase::Hello, handshake, deadline);
  auto hello = co_await read_request(kMaxHelloBody, StoreOp::Hello);
  if (!hello) co_return false;
  if (hello->args.size() != 1 || hello->args[0].size() != kNonceBytes) {
    drop("its hello carries no " + std::to_string(kNonceBytes) +
         "-byte challenge: a ringlab store client of another version?");
    co_return false;
  }
  Nonce client_nonce{};
  std::copy_n(bytes_of(hello->args[0]).begin(), kNonceBytes, client_nonce.begin());
  hello.reset();  // its memory goes back to the budget
  const Nonce server_nonce = fresh_nonce();
  const std::string& token = server_.job_token();
  const Reply challenge{
      StoreStatus::Ok,
      0,
      {text_of(server_nonce),
       text_of(prove(token, kStoreServerProof, {client_nonce, server_nonce}))}};
  if (!co_await send(challenge)) co_return false;
  challenged_ = true;
  watch(Phase::Hello, handshake, deadline);
  auto auth = co_await read_request(kMaxHelloBody, StoreOp::Auth);
  if (!auth) co_return false;
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
    co_return false;
  }
  challenged_ = false;
  greeted_ = true;
  co_return co_await send({StoreStatus::Ok, 0, {}});
}

void Session::answer(Reply reply) {
  parked_reply_ = std::move(reply);
  wake_.cancel();
}

bool Session::silent() const {
  if (phase_ != Phase::Hello || received_ != 0 || closed_) return false;
  if (Clock::now() - opened_ < kSilentGrace) return false;
  ErrorCode error;
  return socket_.available(error) == 0 && !error;
}

void Session::drop(const std::string& why) {
  if (closed_) return;
  server_.note("rejected the connection from " + peer_ + ": " + why);
  close();
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  ErrorCode ignored;
  watchdog_.cancel();
  wake_.cancel();
  socket_.close(ignored);
}

// ---- watchdogs -------------------------------------------------------------------

// Arms the watchdog for this phase (a new phase disarms the previous one): it
// fires at `deadline`, by default `limit` from now.
void Session::watch(Phase phase, Duration limit) { watch(phase, limit, deadline_after(limit)); }

void Session::watch(Phase phase, Duration limit, Clock::time_point deadline) {
  phase_ = phase;
  phase_limit_ = limit;
  const std::uint64_t generation = ++watch_generation_;
  watchdog_.expires_at(deadline);
  watchdog_.async_wait([self = shared_from_this(), generation](ErrorCode error) {
    if (error || generation != self->watch_generation_ || self->closed_) return;
    self->on_watchdog();
  });
}

void Session::unwatch(Phase phase) {
  phase_ = phase;
  ++watch_generation_;
  watchdog_.cancel();
}

void Session::on_watchdog() {
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
// the client may still send is read and thrown away (it was not run, and the
// notice tells it so) until it closes too.
void Session::say_goodbye() {
  const std::string why = "idle for " + std::to_string(phase_limit_.count()) + " ms";
  std::vector<std::byte> body = encode_strings({why});
  const auto header = encode_store_header({false, static_cast<std::uint16_t>(StoreStatus::Closing),
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

// ---- reading -----------------------------------------------------------------------

awaitable<std::pair<ErrorCode, std::size_t>> Session::read_some(asio::mutable_buffer buffer) {
  ErrorCode error;
  const std::size_t n =
      co_await socket_.async_read_some(buffer, asio::redirect_error(asio::use_awaitable, error));
  received_ += n;
  request_got_ += n;
  co_return std::pair{error, n};
}

// What the client still sends after the goodbye, until it closes.
awaitable<void> Session::drain() {
  std::array<std::byte, 512> sink;
  for (;;) {
    const auto [error, n] = co_await read_some(asio::buffer(sink));
    if (error) co_return close();
  }
}

// A read that ended early: says why, unless it was us who closed.
void Session::ended(const ErrorCode& error, std::size_t got, std::size_t of, const char* part) {
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
// hello, then its proof). nullopt: the connection is over (closed, dropped,
// or idle).
awaitable<std::optional<StoreRequest>> Session::read_request(std::size_t max_body,
                                                        std::optional<StoreOp> only) {
  const auto header = co_await read_header(only);
  if (!header) co_return std::nullopt;
  const std::size_t length = header->body_length;
  request_size_ = kStoreHeaderBytes + length;
  if (length > max_body && !greeted_) {
    drop("its hello claims a body of " + std::to_string(length) + " bytes (at most " +
         std::to_string(max_body) + ")");
    co_return std::nullopt;
  }
  BudgetedBody body(server_.budget(), length, refusal(length, max_body));
  while (!body.done()) {
    const std::span<std::byte> into = body.next();
    const auto [error, n] = co_await read_some(asio::buffer(into.data(), into.size()));
    if (phase_ == Phase::Closing) {
      co_await drain();
      co_return std::nullopt;
    }
    body.got(n);
    if (error) {
      ended(error, body.received(), length, "body");
      co_return std::nullopt;
    }
  }
  std::optional<std::vector<std::string>> args;
  if (body.refused().empty()) args = body.strings();
  if (body.refused().empty() && !args) {
    drop("its request body is not a list of length-prefixed strings");
    co_return std::nullopt;
  }
  co_return StoreRequest{static_cast<StoreOp>(header->code), header->number,
                    args ? std::move(*args) : std::vector<std::string>{}, body.take_share(),
                    body.refused()};
}

// Reads and checks a request's header. nullopt: the connection is over.
awaitable<std::optional<StoreHeader>> Session::read_header(std::optional<StoreOp> only) {
  StoreHeaderBytes bytes{};
  request_got_ = 0;
  request_size_ = kStoreHeaderBytes;
  while (request_got_ < kStoreHeaderBytes) {
    const auto [error, n] = co_await read_some(
        asio::buffer(bytes.data() + request_got_, kStoreHeaderBytes - request_got_));
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
  const StoreDecode decoded = decode_store_header(bytes, true);
  if (!decoded.header) {
    drop(decoded.error);
    co_return std::nullopt;
  }
  const auto op = static_cast<StoreOp>(decoded.header->code);
  if (only && op != *only) {
    drop(*only == StoreOp::Hello ? "its first request was " + store_op_name(op) +
                                       ", not hello: not a ringlab store client?"
                                 : "it answered the store's challenge with " + store_op_name(op) +
                                       ", not auth: not a ringlab store client?");
    co_return std::nullopt;
  }
  if (!only && (op == StoreOp::Hello || op == StoreOp::Auth)) {
    drop("it sent " + store_op_name(op) + " again after its hello");
    co_return std::nullopt;
  }
  co_return decoded.header;
}

// Why a body of `length` bytes is refused by its size alone ("": it is not;
// the budget is the BudgetedBody's to apply).
std::string Session::refusal(std::size_t length, std::size_t max_body) const {
  if (length <= max_body) return {};
  return "a request of " + std::to_string(length) + " bytes is more than the store takes (" +
         std::to_string(max_body) + " bytes, key and value together)";
}

// ---- answering ---------------------------------------------------------------------

// Writes a reply; false if the connection is over.
awaitable<bool> Session::send(const Reply& reply) {
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
awaitable<std::optional<Reply>> Session::park() {
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

}  // namespace ringlab::store
