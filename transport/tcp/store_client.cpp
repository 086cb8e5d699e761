// The store's client: one TCP connection to the server, one request at a time
// (a mutex serialises threads). Connecting retries until the timeout because
// rank 0 may start after the others. A get/wait sends its timeout to the
// server, which answers "timeout" itself, so the connection stays in step; the
// client still gives up a little after that in case the server is gone.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <thread>

#include "transport/tcp/framing.hpp"
#include "transport/tcp/socket_util.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp {

namespace {
// How long past a request's own timeout the client waits for the server's
// answer: as long again, at most 5 s (a short timeout asks for a prompt
// verdict on a store host that stopped answering).
Duration reply_grace(Duration timeout) {
  return std::clamp<Duration>(timeout, std::chrono::milliseconds(200), std::chrono::seconds(5));
}
constexpr auto kRetryPause = std::chrono::milliseconds(20);
}  // namespace

class Store::Impl {
 public:
  Impl(const std::string& host, int port, Duration timeout)
      : host_(host), port_(port), timeout_(timeout) {
    address_ = host + ":" + std::to_string(port);
    const auto deadline = Clock::now() + timeout;
    const auto endpoints = resolve(io_, host, port, "store (MASTER_ADDR:MASTER_PORT)");
    std::string last_error = "no attempt";
    for (;;) {
      socket_ = tcp::socket(io_);
      ErrorCode error = connect_until(io_, socket_, endpoints, deadline);
      if (!error) {
        socket_.set_option(tcp::no_delay(true), error);
        // Say hello; a server that is not a ringlab store will not answer it.
        try {
          request(StoreOp::Hello, 0, {}, deadline);
          return;
        } catch (const CommError& hello_error) {
          last_error = hello_error.what();
        }
      } else {
        last_error = error.message();
      }
      const auto now = Clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(kRetryPause, deadline - now));
    }
    throw CommError("could not reach the store at " + address_ + " within " +
                    std::to_string(timeout.count()) +
                    " ms: is rank 0 running and MASTER_ADDR/MASTER_PORT right? (last error: " +
                    last_error + ")");
  }

  struct Reply {
    StoreStatus status;
    std::int64_t number;
    std::vector<std::string> strings;
  };

  // Sends one request and reads its reply before `deadline`. Throws CommError
  // on any failure (the connection is then unusable).
  Reply request(StoreOp op, std::int64_t number, const std::vector<std::string_view>& args,
                Clock::time_point deadline) {
    const auto body = encode_strings(args);
    if (body.size() > kMaxStoreBody)
      throw std::invalid_argument("store " + std::string(store_op_name(static_cast<std::uint16_t>(op))) +
                                  ": request of " + std::to_string(body.size()) +
                                  " bytes exceeds the store's limit of " +
                                  std::to_string(kMaxStoreBody));
    const auto header = encode_store_header(
        {true, static_cast<std::uint16_t>(op), static_cast<std::uint32_t>(body.size()), number});
    const std::vector<asio::const_buffer> buffers{asio::buffer(header), asio::buffer(body)};
    ErrorCode error = write_until(io_, socket_, buffers, deadline);
    StoreHeaderBytes reply_bytes{};
    if (!error) error = read_until(io_, socket_, asio::buffer(reply_bytes), deadline);
    if (error) fail(op, error);
    const StoreDecode decoded = decode_store_header(reply_bytes, false);
    if (!decoded.header)
      throw CommError("the store at " + address_ + " sent a garbled reply to " +
                      store_op_name(static_cast<std::uint16_t>(op)) + ": " + decoded.error);
    std::vector<std::byte> reply_body(decoded.header->body_length);
    error = read_until(io_, socket_, asio::buffer(reply_body), deadline);
    if (error) fail(op, error);
    auto strings = decode_strings(reply_body);
    if (!strings)
      throw CommError("the store at " + address_ + " sent a garbled reply body to " +
                      store_op_name(static_cast<std::uint16_t>(op)));
    Reply reply{static_cast<StoreStatus>(decoded.header->code), decoded.header->number,
                std::move(*strings)};
    if (reply.status == StoreStatus::Error)
      throw CommError("the store at " + address_ + " refused the request: " +
                      (reply.strings.empty() ? std::string("no reason given") : reply.strings[0]));
    return reply;
  }

  [[noreturn]] void fail(StoreOp op, ErrorCode error) {
    ErrorCode ignored;
    socket_.close(ignored);
    const std::string what = store_op_name(static_cast<std::uint16_t>(op));
    if (error == asio::error::timed_out)
      throw StoreLostError("the store at " + address_ + " did not answer " + what +
                           " in time: is rank 0 still running?");
    throw StoreLostError("lost the connection to the store at " + address_ + " during " + what +
                         " (" + error.message() +
                         "): rank 0, which hosts the store, probably exited");
  }

  // A request that returns at once (no waiting on keys).
  Reply quick(StoreOp op, std::int64_t number, const std::vector<std::string_view>& args) {
    std::lock_guard lock(mutex_);
    return request(op, number, args, Clock::now() + timeout_ + reply_grace(timeout_));
  }

  // get/wait: the server waits up to `timeout` for the keys.
  Reply waiting(StoreOp op, const std::vector<std::string_view>& keys, Duration timeout) {
    std::lock_guard lock(mutex_);
    Reply reply = request(op, timeout.count(), keys, Clock::now() + timeout + reply_grace(timeout));
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
  std::mutex mutex_;
  asio::io_context io_;
  tcp::socket socket_{io_};
};

Store::Store(const std::string& host, int port, Duration timeout)
    : impl_(std::make_unique<Impl>(host, port, timeout)) {}
Store::~Store() = default;

Duration Store::timeout() const { return impl_->timeout_; }
void Store::set_timeout(Duration timeout) { impl_->timeout_ = timeout; }
std::string Store::address() const { return impl_->address_; }

void Store::set(const std::string& key, std::string_view value) {
  impl_->quick(StoreOp::Set, 0, {key, value});
}

std::string Store::get(const std::string& key, Duration timeout) {
  auto reply = impl_->waiting(StoreOp::Get, {key}, timeout);
  if (reply.strings.size() != 1)
    throw CommError("the store at " + impl_->address_ + " answered get('" + key + "') with " +
                    std::to_string(reply.strings.size()) + " values");
  return std::move(reply.strings[0]);
}

std::int64_t Store::add(const std::string& key, std::int64_t delta) {
  return impl_->quick(StoreOp::Add, delta, {key}).number;
}

void Store::wait(const std::vector<std::string>& keys, Duration timeout) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  impl_->waiting(StoreOp::Wait, views, timeout);
}

std::string Store::compare_set(const std::string& key, std::string_view expected,
                               std::string_view desired) {
  auto reply = impl_->quick(StoreOp::CompareSet, 0, {key, expected, desired});
  if (reply.strings.size() != 1)
    throw CommError("the store at " + impl_->address_ + " answered compare_set('" + key +
                    "') with " + std::to_string(reply.strings.size()) + " values");
  return std::move(reply.strings[0]);
}

bool Store::check(const std::vector<std::string>& keys) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  return impl_->quick(StoreOp::Check, 0, views).number != 0;
}

bool Store::delete_key(const std::string& key) {
  return impl_->quick(StoreOp::Delete, 0, {key}).number != 0;
}

std::int64_t Store::num_keys() { return impl_->quick(StoreOp::NumKeys, 0, {}).number; }

bool Store::connection_closed() {
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

}  // namespace ringlab::tcp
