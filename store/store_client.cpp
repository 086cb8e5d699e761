// The store's client: one TCP connection to the server, one request at a time
// (a mutex serialises threads). Connecting retries until the timeout because
// rank 0 may start after the others; what stopped the last attempt (refused,
// reset, no answer to hello) is what the final error reports. The hello is
// a challenge: the store must prove it knows the job token, then the client
// does (token_proof.hpp). A server that is not a ringlab store, or a store that
// does not know the token (another job's), fails at once, saying so. A get/wait
// sends its timeout to the server, which answers "timeout" itself, so the
// connection stays in step; the client still gives up a little after that in
// case the server is gone (StoreLostError). The server closes a connection left
// idle, saying so first (a Closing notice, sent instead of running any request
// that crossed it): the client then reconnects and sends the request again.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <thread>

#include "store/protocol.hpp"
#include "store/socket_util.hpp"
#include "store/store.hpp"
#include "store/token_proof.hpp"

namespace ringlab::store {

namespace {
// How long past a request's own timeout the client waits for the server's
// answer: as long again, at most 5 s (a short timeout asks for a prompt
// verdict on a store host that stopped answering).
Duration reply_grace(Duration timeout) {
  return std::clamp<Duration>(timeout, std::chrono::milliseconds(200), std::chrono::seconds(5));
}
constexpr auto kRetryPause = std::chrono::milliseconds(20);

std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
std::span<const std::byte> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
}  // namespace

class StoreClient::Impl {
 public:
  Impl(const std::string& host, int port, Duration timeout, std::string job_token)
      : host_(host),
        port_(port),
        address_(host + ":" + std::to_string(port)),
        timeout_(timeout),
        job_token_(std::move(job_token)) {
    endpoints_ = resolve(io_, host, port, "store (MASTER_ADDR:MASTER_PORT)");
    open(deadline_after(timeout), timeout);
  }

  struct Reply {
    StoreStatus status;
    std::int64_t number;
    std::vector<std::string> strings;
  };

  // Connects and says hello, retrying until `deadline`; throws CommError
  // saying what stopped the last attempt. `again`: the store closed this
  // client's idle connection earlier, so it was up; if nothing listens now,
  // rank 0 is gone, and waiting for it would only delay saying so.
  void open(Clock::time_point deadline, Duration timeout, bool again = false) {
    std::string last_error;
    for (;;) {
      ErrorCode ignored;
      socket_.close(ignored);
      socket_ = tcp::socket(io_);
      ErrorCode error = connect_until(io_, socket_, endpoints_, deadline);
      if (!error) {
        socket_.set_option(tcp::no_delay(true), error);
        try {
          greet(deadline);
          return;
        } catch (const WrongStoreError&) {
          socket_.close(ignored);
          throw;
        } catch (const CommError& hello_error) {
          last_error = hello_error.what();
        }
      } else if (error == asio::error::connection_refused) {
        if (again)
          throw CommError("lost the store at " + address_ +
                          ": it closed this client's idle connection, and now nothing listens "
                          "there: rank 0, which hosts the store, probably exited");
        last_error = "connection refused: nothing listens there (yet)";
      } else if (error != asio::error::timed_out || last_error.empty()) {
        // (The last attempt runs into the deadline: the error before it says more.)
        last_error = error == asio::error::timed_out ? "no answer to the connection attempt"
                                                     : error.message();
      }
      const auto now = Clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(kRetryPause, deadline - now));
    }
    socket_.close();
    throw CommError(
        "could not reach the store at " + address_ + " within " + std::to_string(timeout.count()) +
        " ms: is rank 0 running and MASTER_ADDR/MASTER_PORT right? (last error: " + last_error +
        ")");
  }

  // The opening exchange on a fresh connection: the store proves it knows
  // the job token, then this client does.
  void greet(Clock::time_point deadline) {
    const Nonce mine = fresh_nonce();
    Reply reply = exchange(StoreOp::Hello, 0, {as_text(mine)}, deadline, true);
    if (reply.status != StoreStatus::Ok)
      throw CommError("the store at " + address_ + " refused the connection: " +
                      (reply.strings.empty() ? std::string("no reason given") : reply.strings[0]));
    if (reply.strings.size() != 2 || reply.strings[0].size() != kNonceBytes ||
        reply.strings[1].size() != kProofBytes)
      throw WrongStoreError("the server at " + address_ +
                        " is not a ringlab store of this version: its answer to hello carries no "
                        "proof of the job token");
    const auto theirs = bytes_of(reply.strings[0]);
    if (!same_proof(bytes_of(reply.strings[1]),
                    prove(job_token_, kStoreServerProof, {mine, theirs})))
      throw WrongStoreError(
          "the store at " + address_ +
          " does not know this rank's job token: it is another job's store (is another job "
          "using port " +
          std::to_string(port_) +
          "? give each job its own MASTER_PORT), or this rank's RINGLAB_JOB_TOKEN is not rank "
          "0's" +
          (job_token_.empty() ? " (this rank has none: RINGLAB_JOB_TOKEN is not set)" : ""));
    const Proof proof = prove(job_token_, kStoreClientProof, {mine, theirs});
    reply = exchange(StoreOp::Auth, 0, {as_text(proof)}, deadline, true);
    if (reply.status != StoreStatus::Ok)
      throw WrongStoreError(
          "the store at " + address_ + " refused this rank's proof of the job token: " +
          (reply.strings.empty() ? std::string("no reason given") : reply.strings[0]));
  }

  // Sends one request and reads its reply before `deadline`. Throws CommError
  // on any failure (the connection is then unusable). `opening`: this is the
  // hello, whose failures say something else.
  Reply exchange(StoreOp op, std::int64_t number, const std::vector<std::string_view>& args,
                 Clock::time_point deadline, bool opening = false) {
    const std::string what = store_op_name(static_cast<std::uint16_t>(op));
    const auto body = encode_strings(args);
    if (body.size() > kMaxStoreBody)
      throw std::invalid_argument("store " + what + ": request of " + std::to_string(body.size()) +
                                  " bytes exceeds the store's limit of " +
                                  std::to_string(kMaxStoreBody));
    if (!socket_.is_open())
      throw CommError("the connection to the store at " + address_ +
                      " was lost earlier: rank 0, which hosts the store, probably exited");
    const auto header = encode_store_header(
        {true, static_cast<std::uint16_t>(op), static_cast<std::uint32_t>(body.size()), number});
    const std::vector<asio::const_buffer> buffers{asio::buffer(header), asio::buffer(body)};
    ErrorCode error = write_until(io_, socket_, buffers, deadline);
    StoreHeaderBytes reply_bytes{};
    if (!error) error = read_until(io_, socket_, asio::buffer(reply_bytes), deadline);
    if (error) fail(what, error, opening);
    const StoreDecode decoded = decode_store_header(reply_bytes, false);
    if (!decoded.header) {
      ErrorCode ignored;
      socket_.close(ignored);
      if (opening)
        throw WrongStoreError("the server at " + address_ +
                          " is not a ringlab store: its answer to hello has " + decoded.error +
                          ": is MASTER_PORT the port of another service?");
      throw CommError("the store at " + address_ + " sent a garbled reply to " + what + ": " +
                      decoded.error);
    }
    std::vector<std::byte> reply_body(decoded.header->body_length);
    error = read_until(io_, socket_, asio::buffer(reply_body), deadline);
    if (error) fail(what, error, opening);
    auto strings = decode_strings(reply_body);
    if (!strings) {
      ErrorCode ignored;
      socket_.close(ignored);
      throw CommError("the store at " + address_ + " sent a garbled reply body to " + what);
    }
    Reply reply{static_cast<StoreStatus>(decoded.header->code), decoded.header->number,
                std::move(*strings)};
    if (reply.status == StoreStatus::Error && !opening)
      throw CommError("the store at " + address_ + " refused the request: " +
                      (reply.strings.empty() ? std::string("no reason given") : reply.strings[0]));
    return reply;
  }

  [[noreturn]] void fail(const std::string& what, ErrorCode error, bool opening) {
    ErrorCode ignored;
    socket_.close(ignored);
    if (opening) {
      if (error == asio::error::timed_out)
        throw CommError("the server at " + address_ +
                        " accepted the connection but did not answer hello in time: is it a "
                        "ringlab store?");
      throw CommError("the server at " + address_ + " closed the connection during hello (" +
                      error.message() + ")");
    }
    if (error == asio::error::timed_out)
      throw StoreLostError("the store at " + address_ + " did not answer " + what +
                           " in time: is rank 0 still running?");
    throw StoreLostError("lost the connection to the store at " + address_ + " during " + what +
                         " (" + error.message() +
                         "): rank 0, which hosts the store, probably exited");
  }

  // True if the server has said something while no request was under way:
  // the only thing it says then is that it closes this idle connection.
  bool told_idle(Clock::time_point deadline) {
    if (!socket_.is_open()) return false;
    pollfd readable{socket_.native_handle(), POLLIN, 0};
    if (::poll(&readable, 1, 0) <= 0) return false;
    StoreHeaderBytes bytes{};
    if (read_until(io_, socket_, asio::buffer(bytes), deadline))
      return false;  // gone: say so later
    const StoreDecode decoded = decode_store_header(bytes, false);
    if (decoded.header && decoded.header->code == static_cast<std::uint16_t>(StoreStatus::Closing))
      return true;
    ErrorCode ignored;
    socket_.close(ignored);
    throw CommError("the store at " + address_ + " sent " +
                    (decoded.header ? std::string("a reply nobody asked for") : decoded.error) +
                    " while no request was under way");
  }

  // One request; when the server closed the connection for idleness before
  // running it, on a new connection.
  Reply request(StoreOp op, std::int64_t number, const std::vector<std::string_view>& args,
                Clock::time_point deadline) {
    if (told_idle(deadline)) open(deadline, timeout_, true);
    Reply reply = exchange(op, number, args, deadline);
    if (reply.status == StoreStatus::Closing) {
      open(deadline, timeout_, true);
      reply = exchange(op, number, args, deadline);
    }
    if (reply.status == StoreStatus::Closing)
      throw CommError("the store at " + address_ + " keeps closing the connection as idle");
    return reply;
  }

  // A request that returns at once (no waiting on keys).
  Reply quick(StoreOp op, std::int64_t number, const std::vector<std::string_view>& args) {
    std::lock_guard lock(mutex_);
    return request(op, number, args, deadline_after(timeout_, reply_grace(timeout_)));
  }

  // get/wait: the server waits up to `timeout` for the keys.
  Reply waiting(StoreOp op, const std::vector<std::string_view>& keys, Duration timeout) {
    std::lock_guard lock(mutex_);
    timeout = std::max(timeout, Duration::zero());
    Reply reply = request(op, timeout.count(), keys, deadline_after(timeout, reply_grace(timeout)));
    if (reply.status == StoreStatus::Timeout) {
      std::string missing;
      for (const auto& key : reply.strings) missing += (missing.empty() ? "'" : ", '") + key + "'";
      throw TimeoutError("timed out after " + std::to_string(timeout.count()) +
                         " ms waiting for key(s) " + missing + " in the store at " + address_);
    }
    return reply;
  }

  std::string host_;
  int port_;
  std::string address_;
  Duration timeout_;
  std::string job_token_;
  std::mutex mutex_;
  asio::io_context io_;
  tcp::resolver::results_type endpoints_;
  tcp::socket socket_{io_};
};

StoreClient::StoreClient(const std::string& host, int port, Duration timeout, std::string job_token)
    : impl_(std::make_unique<Impl>(host, port, timeout, std::move(job_token))) {}
StoreClient::~StoreClient() = default;

Duration StoreClient::timeout() const { return impl_->timeout_; }
void StoreClient::set_timeout(Duration timeout) { impl_->timeout_ = timeout; }
std::string StoreClient::address() const { return impl_->address_; }

void StoreClient::set(const std::string& key, std::string_view value) {
  impl_->quick(StoreOp::Set, 0, {key, value});
}

std::string StoreClient::get(const std::string& key, Duration timeout) {
  auto reply = impl_->waiting(StoreOp::Get, {key}, timeout);
  if (reply.strings.size() != 1)
    throw CommError("the store at " + impl_->address_ + " answered get('" + key + "') with " +
                    std::to_string(reply.strings.size()) + " values");
  return std::move(reply.strings[0]);
}

std::int64_t StoreClient::add(const std::string& key, std::int64_t delta) {
  return impl_->quick(StoreOp::Add, delta, {key}).number;
}

void StoreClient::wait(const std::vector<std::string>& keys, Duration timeout) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  impl_->waiting(StoreOp::Wait, views, timeout);
}

std::string StoreClient::compare_set(const std::string& key, std::string_view expected,
                                     std::string_view desired) {
  auto reply = impl_->quick(StoreOp::CompareSet, 0, {key, expected, desired});
  if (reply.strings.size() != 1)
    throw CommError("the store at " + impl_->address_ + " answered compare_set('" + key +
                    "') with " + std::to_string(reply.strings.size()) + " values");
  return std::move(reply.strings[0]);
}

bool StoreClient::check(const std::vector<std::string>& keys) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  return impl_->quick(StoreOp::Check, 0, views).number != 0;
}

bool StoreClient::delete_key(const std::string& key) {
  return impl_->quick(StoreOp::Delete, 0, {key}).number != 0;
}

std::int64_t StoreClient::num_keys() { return impl_->quick(StoreOp::NumKeys, 0, {}).number; }

bool StoreClient::connection_closed() {
  std::unique_lock lock(impl_->mutex_, std::try_to_lock);
  if (!lock) return false;  // a request is in flight: it finds out itself
  if (!impl_->socket_.is_open()) return true;
  // No request is in flight: anything readable now is the end of the stream.
  pollfd watched{impl_->socket_.native_handle(), POLLIN, 0};
  if (::poll(&watched, 1, 0) <= 0) return false;
  char byte;
  const ssize_t n = ::recv(watched.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace ringlab::store
