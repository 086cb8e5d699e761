// C10dStore: one TCP connection to a PyTorch TCPStore, one request at a time
// (a mutex serialises threads). The request encoding and the protocol probe
// are in c10d_wire.hpp/.cpp; this file holds the connection and one method
// per store operation, as torch's own client has.
//
// Every read and write has a deadline. A server that stops answering, or
// closes the connection, fails the request with StoreLostError naming the
// store; a wait that runs out of time fails with TimeoutError naming the keys
// still missing, and leaves the client usable (Validated: CANCEL_WAIT;
// Legacy: a fresh connection, since 1.x servers cannot cancel a wait).
#include "store/c10d_client.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <thread>

#include "store/c10d_wire.hpp"
#include "store/socket_util.hpp"
#include "store/store.hpp"  // StoreLostError

namespace ringlab::store {

namespace {
// How long past the store's timeout a quick request's reply may take.
constexpr Duration kReplyGrace{5000};
constexpr auto kRetryPause = std::chrono::milliseconds(20);
}  // namespace

class C10dStore::Impl {
 public:
  Impl(const std::string& host, int port, Duration timeout, std::string key_prefix,
       C10dProtocol protocol)
      : address_(host + ":" + std::to_string(port)),
        prefix_(std::move(key_prefix)),
        timeout_(timeout),
        protocol_(protocol) {
    endpoints_ = resolve(io_, host, port, "c10d store (MASTER_ADDR:MASTER_PORT)");
    const auto deadline = deadline_after(timeout);
    connect_retrying(deadline, timeout);
    if (protocol_ == C10dProtocol::Auto) {
      protocol_ = probe_protocol(socket_, address_, deadline);
      close();  // the probe's connection is spent: talk on a fresh one
      connect_retrying(deadline, timeout);
    }
    greet(deadline);
  }

  // Connects once the server listens, retrying until `deadline`.
  void connect_retrying(Clock::time_point deadline, Duration timeout) {
    std::string last_error;
    for (;;) {
      close();
      socket_ = tcp::socket(io_);
      const ErrorCode error = connect_until(io_, socket_, endpoints_, deadline);
      if (!error) {
        ErrorCode ignored;
        socket_.set_option(tcp::no_delay(true), ignored);
        return;
      }
      if (error == asio::error::connection_refused)
        last_error = "connection refused: nothing listens there (yet)";
      else if (error != asio::error::timed_out || last_error.empty())
        last_error = error == asio::error::timed_out ? "no answer to the connection attempt"
                                                     : error.message();
      const auto now = Clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(kRetryPause, deadline - now));
    }
    close();
    throw CommError("could not reach the c10d store at " + address_ + " within " +
                    std::to_string(timeout.count()) +
                    " ms: is the launcher (torchrun's agent, or rank 0's TCPStore) running, and "
                    "MASTER_ADDR/MASTER_PORT right? (last error: " +
                    last_error + ")");
  }

  // A Validated server serves a connection once it has said VALIDATE.
  void greet(Clock::time_point deadline) {
    if (protocol_ != C10dProtocol::Validated) return;
    send(validate_request(), deadline, "the VALIDATE handshake");
  }

  void close() {
    ErrorCode ignored;
    socket_.close(ignored);
  }

  // Before a request: a connection dropped on purpose (a Legacy wait that
  // timed out) is made again; one lost to an error stays lost.
  void ready(Clock::time_point deadline, const std::string& what) {
    if (socket_.is_open()) return;
    if (!dropped_)
      throw StoreLostError("the connection to the c10d store at " + address_ +
                           " was lost earlier; cannot " + what +
                           ": the launcher that hosts the store probably exited");
    dropped_ = false;
    connect_retrying(deadline, timeout_);
    greet(deadline);
  }

  void send(const C10dRequest& request, Clock::time_point deadline, const std::string& what) {
    const ErrorCode error =
        write_until(io_, socket_, {asio::buffer(request.bytes())}, deadline);
    if (error) fail(what, error);
  }

  template <typename T>
  T read_value(Clock::time_point deadline, const std::string& what) {
    unsigned char raw[sizeof(T)];
    const ErrorCode error = read_until(io_, socket_, asio::buffer(raw), deadline);
    if (error) fail(what, error);
    return decode_le<T>(raw);
  }

  std::string read_string(Clock::time_point deadline, const std::string& what) {
    const auto length = read_value<std::uint64_t>(deadline, what);
    if (length > kMaxC10dValueBytes) {
      close();
      throw CommError("the c10d store at " + address_ + " answered " + what + " with a " +
                      std::to_string(length) + "-byte value, more than ringlab accepts (" +
                      std::to_string(kMaxC10dValueBytes) +
                      " bytes): is MASTER_PORT the port of a c10d TCPStore?");
    }
    std::string value(length, '\0');
    const ErrorCode error = read_until(io_, socket_, asio::buffer(value), deadline);
    if (error) fail(what, error);
    return value;
  }

  [[noreturn]] void fail(const std::string& what, ErrorCode error) {
    close();
    if (error == asio::error::timed_out)
      throw StoreLostError("the c10d store at " + address_ + " did not answer " + what +
                           " in time: is the launcher that hosts it still running?");
    throw StoreLostError("lost the connection to the c10d store at " + address_ + " during " +
                         what + " (" + error.message() +
                         "): the launcher that hosts the store probably exited");
  }

  Clock::time_point quick_deadline() const { return deadline_after(timeout_, kReplyGrace); }

  // WAIT for `keys` (already prefixed): true once they exist, false when
  // `timeout` ran out first (the connection is then usable again, or
  // dropped to be made again).
  bool wait_keys(const std::vector<std::string>& keys, Duration timeout, const std::string& what) {
    ready(quick_deadline(), what);
    send(request(C10dQuery::Wait, protocol_).keys(keys), quick_deadline(), what);
    const auto until = deadline_after(std::max(timeout, Duration::zero()));
    unsigned char answer = 0;
    const ErrorCode error = read_until(io_, socket_, asio::buffer(&answer, 1), until);
    if (!error) return check_wait_answer(answer, kStopWaiting, what);
    if (error != asio::error::timed_out) fail(what, error);
    if (protocol_ == C10dProtocol::Legacy) {
      // A 1.x server cannot forget the wait: it would answer it later, out
      // of step. A fresh connection leaves that answer unread for good.
      close();
      dropped_ = true;
      return false;
    }
    send(request(C10dQuery::CancelWait, protocol_), quick_deadline(), what + " (cancelling it)");
    answer = read_value<std::uint8_t>(quick_deadline(), what + " (cancelling it)");
    if (answer == kWaitCanceled) return false;
    // The keys came just as the wait was cancelled: the cancel's answer follows.
    check_wait_answer(answer, kStopWaiting, what);
    answer = read_value<std::uint8_t>(quick_deadline(), what + " (cancelling it)");
    check_wait_answer(answer, kWaitCanceled, what);
    return true;
  }

  bool check_wait_answer(unsigned char answer, unsigned char expected, const std::string& what) {
    if (answer == expected) return true;
    close();
    throw CommError("the c10d store at " + address_ + " answered " + what + " with byte " +
                    std::to_string(answer) + " where " + std::to_string(expected) +
                    " belongs: is MASTER_PORT the port of a c10d TCPStore?");
  }

  std::string prefixed(const std::string& key) const { return "/" + prefix_ + key; }
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const {
    std::vector<std::string> out;
    out.reserve(keys.size());
    for (const auto& key : keys) out.push_back(prefixed(key));
    return out;
  }

  // The keys among `keys` that do not exist (for a timeout's message).
  std::string missing(const std::vector<std::string>& keys) {
    std::string text;
    for (const auto& key : keys) {
      bool present = false;
      try {
        present = check_locked({key});
      } catch (const CommError&) {
      }
      if (!present) text += (text.empty() ? "'" : ", '") + key + "'";
    }
    return text;
  }

  bool check_locked(const std::vector<std::string>& keys) {
    const auto deadline = quick_deadline();
    ready(deadline, "check");
    send(request(C10dQuery::Check, protocol_).keys(prefixed(keys)), deadline, "check");
    const auto answer = read_value<std::uint8_t>(deadline, "check");
    if (answer == kReady || answer == kNotReady) return answer == kReady;
    check_wait_answer(answer, kReady, "check");
    return false;
  }

  C10dRequest request(C10dQuery query, C10dProtocol protocol) const {
    return C10dRequest(query_byte(query, protocol));
  }

  std::string address_;
  std::string prefix_;
  Duration timeout_;
  C10dProtocol protocol_;
  bool dropped_ = false;
  std::mutex mutex_;
  asio::io_context io_;
  tcp::resolver::results_type endpoints_;
  tcp::socket socket_{io_};
};

C10dStore::C10dStore(const std::string& host, int port, Duration timeout, std::string key_prefix,
                     C10dProtocol protocol)
    : impl_(std::make_unique<Impl>(host, port, timeout, std::move(key_prefix), protocol)) {}
C10dStore::~C10dStore() = default;

C10dProtocol C10dStore::protocol() const { return impl_->protocol_; }
const std::string& C10dStore::key_prefix() const { return impl_->prefix_; }
std::string C10dStore::address() const { return impl_->address_; }
Duration C10dStore::timeout() const { return impl_->timeout_; }
void C10dStore::set_timeout(Duration timeout) { impl_->timeout_ = timeout; }

void C10dStore::set(const std::string& key, std::string_view value) {
  std::lock_guard lock(impl_->mutex_);
  const auto deadline = impl_->quick_deadline();
  impl_->ready(deadline, "set('" + key + "')");
  impl_->send(impl_->request(C10dQuery::Set, impl_->protocol_)
                  .string(impl_->prefixed(key))
                  .string(value),
              deadline, "set('" + key + "')");
}

std::string C10dStore::get(const std::string& key, Duration timeout) {
  std::lock_guard lock(impl_->mutex_);
  const std::string what = "get('" + key + "')";
  if (!impl_->wait_keys({impl_->prefixed(key)}, timeout, what))
    throw TimeoutError("timed out after " + std::to_string(timeout.count()) +
                       " ms waiting for key '" + key + "' in the c10d store at " +
                       impl_->address_);
  const auto deadline = impl_->quick_deadline();
  impl_->send(impl_->request(C10dQuery::Get, impl_->protocol_).string(impl_->prefixed(key)),
              deadline, what);
  return impl_->read_string(deadline, what);
}

std::int64_t C10dStore::add(const std::string& key, std::int64_t delta) {
  std::lock_guard lock(impl_->mutex_);
  const std::string what = "add('" + key + "')";
  const auto deadline = impl_->quick_deadline();
  impl_->ready(deadline, what);
  impl_->send(impl_->request(C10dQuery::Add, impl_->protocol_)
                  .string(impl_->prefixed(key))
                  .value<std::int64_t>(delta),
              deadline, what);
  return impl_->read_value<std::int64_t>(deadline, what);
}

void C10dStore::wait(const std::vector<std::string>& keys, Duration timeout) {
  std::lock_guard lock(impl_->mutex_);
  if (impl_->wait_keys(impl_->prefixed(keys), timeout, "wait")) return;
  throw TimeoutError("timed out after " + std::to_string(timeout.count()) +
                     " ms waiting for key(s) " + impl_->missing(keys) +
                     " in the c10d store at " + impl_->address_);
}

bool C10dStore::check(const std::vector<std::string>& keys) {
  std::lock_guard lock(impl_->mutex_);
  return impl_->check_locked(keys);
}

std::string C10dStore::compare_set(const std::string& key, std::string_view expected,
                                   std::string_view desired) {
  std::lock_guard lock(impl_->mutex_);
  const std::string what = "compare_set('" + key + "')";
  const auto deadline = impl_->quick_deadline();
  impl_->ready(deadline, what);
  impl_->send(impl_->request(C10dQuery::CompareSet, impl_->protocol_)
                  .string(impl_->prefixed(key))
                  .string(expected)
                  .string(desired),
              deadline, what);
  return impl_->read_string(deadline, what);
}

bool C10dStore::delete_key(const std::string& key) {
  std::lock_guard lock(impl_->mutex_);
  const std::string what = "delete_key('" + key + "')";
  const auto deadline = impl_->quick_deadline();
  impl_->ready(deadline, what);
  impl_->send(impl_->request(C10dQuery::DeleteKey, impl_->protocol_).string(impl_->prefixed(key)),
              deadline, what);
  return impl_->read_value<std::int64_t>(deadline, what) == 1;
}

std::int64_t C10dStore::num_keys() {
  std::lock_guard lock(impl_->mutex_);
  const auto deadline = impl_->quick_deadline();
  impl_->ready(deadline, "num_keys");
  impl_->send(impl_->request(C10dQuery::NumKeys, impl_->protocol_), deadline, "num_keys");
  return impl_->read_value<std::int64_t>(deadline, "num_keys");
}

bool C10dStore::connection_closed() {
  std::unique_lock lock(impl_->mutex_, std::try_to_lock);
  if (!lock) return false;  // a request is in flight: it finds out itself
  if (!impl_->socket_.is_open()) return !impl_->dropped_;
  // No request is in flight: anything readable now is the end of the stream.
  pollfd watched{impl_->socket_.native_handle(), POLLIN, 0};
  if (::poll(&watched, 1, 0) <= 0) return false;
  char byte;
  const ssize_t n = ::recv(watched.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace ringlab::store
