// The store's server (rank 0): a map of keys to byte strings served over TCP
// on one background thread running a Boost.Asio io_context. This file
// accepts the connections; each is a Session (session.hpp), whose requests
// the KeyTable answers, one handler per request type (key_table.hpp).
//
// Nothing a client sends can take the store down:
//  - Memory: a body is read in chunks, and memory is taken as bytes arrive,
//    not as the header claims (budgeted_body.hpp). Keys held, each at its
//    real cost (memory_budget.hpp), plus bodies being received stay within
//    StoreLimits::max_total_bytes, and at most max_keys keys are held; a
//    request past a limit is read to its end, discarded, and answered with an
//    error saying which limit, and the connection goes on. Values are shared
//    with the replies that carry them, so a get copies nothing.
//  - Time: every phase of a connection has a watchdog (session.hpp).
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
#include <vector>

#include "net/log.hpp"
#include "store/protocol.hpp"
#include "store/server_impl.hpp"
#include "store/session.hpp"

namespace ringlab::store {

using net::log_line;

namespace {

// Accepting backs off this long at first when the process is out of
// descriptors, doubling up to the second figure.
constexpr auto kFirstBackoff = std::chrono::milliseconds(10);
constexpr auto kLongestBackoff = std::chrono::milliseconds(500);
// Log lines about rejected connections, at most this many a second.
constexpr int kLinesPerSecond = 5;

bool out_of_descriptors(const ErrorCode& error) {
  return error == asio::error::no_descriptors ||
         error == boost::system::errc::too_many_files_open_in_system ||
         error == asio::error::no_buffer_space || error == asio::error::no_memory;
}

}  // namespace

StoreServer::Impl::Impl(const std::string& bind_addr, int port, Duration handshake_timeout,
                        StoreLimits limits, std::string job_token)
    : budget_(limits.max_total_bytes),
      handshake_timeout_(handshake_timeout),
      limits_(limits),
      job_token_(std::move(job_token)) {
  limits_.max_request_bytes = std::min<std::size_t>(limits_.max_request_bytes, kMaxStoreBody);
  listen(bind_addr, port);
  asio::co_spawn(io_, accept_connections(), [this](std::exception_ptr escaped) {
    if (!escaped || stopping_) return;
    try {
      std::rethrow_exception(escaped);
    } catch (const std::exception& e) {
      log_line(name_ + ": stopped accepting connections: " + e.what());
    }
  });
  thread_ = std::thread([this] { run(); });
}

StoreServer::Impl::~Impl() {
  io_.stop();
  thread_.join();
  // Let every session see its connection closed and end, so none outlives
  // this object; whatever is left when the time is up goes with io_.
  io_.restart();
  asio::post(io_, [this] { shut_down(); });
  io_.run_for(std::chrono::seconds(1));
  table_.clear_waiters();
  sessions_.clear();
}

// Binds and listens at bind_addr:port; throws CommError saying what to do.
void StoreServer::Impl::listen(const std::string& bind_addr, int port) {
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
}

// The store's thread. An exception out of a handler is logged; the store
// runs on.
void StoreServer::Impl::run() {
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
}

void StoreServer::Impl::shut_down() {
  stopping_ = true;
  ErrorCode ignored;
  acceptor_.close(ignored);
  backoff_.cancel();
  table_.stop_timers();
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

asio::awaitable<void> StoreServer::Impl::accept_connections() {
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
    table_.forget(session);
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

StoreServer::StoreServer(const std::string& bind_addr, int port, Duration handshake_timeout,
                         StoreLimits limits, std::string job_token)
    : impl_(std::make_unique<Impl>(bind_addr, port, handshake_timeout, limits,
                                   std::move(job_token))) {}
StoreServer::~StoreServer() = default;
int StoreServer::port() const { return impl_->port(); }

}  // namespace ringlab::store
