// The store's server (rank 0): a map of keys to byte strings served over TCP
// on one background thread running a Boost.Asio io_context. Each connection
// is a Session that reads one request (header, then body), answers it, and
// reads the next; get/wait on missing keys park the session as a Waiter until
// the keys appear (any set/add/compare_set re-checks the waiters) or its
// timeout fires. Garbage (wrong magic, bad version, absurd length, a request
// before hello, a connection that stays silent past the handshake timeout) is
// logged on stderr and that connection is closed; the others carry on.
#include <algorithm>
#include <charconv>
#include <list>
#include <map>
#include <memory>
#include <thread>

#include "transport/tcp/asio.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/log.hpp"
#include "transport/tcp/socket_util.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp {

namespace {

class Session;

// A get/wait that found missing keys, parked until they exist or time runs out.
struct Waiter {
  std::shared_ptr<Session> session;
  StoreOp op;
  std::vector<std::string> keys;
  std::unique_ptr<asio::steady_timer> timer;
};

}  // namespace

class StoreServer::Impl {
 public:
  Impl(const std::string& bind_addr, int port, Duration handshake_timeout);
  ~Impl();

  int port() const { return port_; }
  Duration handshake_timeout() const { return handshake_timeout_; }
  asio::io_context& io() { return io_; }
  const std::string& name() const { return name_; }

  // Answers one request (get/wait on missing keys park the session as a waiter).
  void handle(const std::shared_ptr<Session>& session, const StoreHeader& header,
              std::vector<std::string> args);
  void forget(const std::shared_ptr<Session>& session);

 private:
  void accept_next();
  void wake_waiters();
  bool all_present(const std::vector<std::string>& keys) const;
  void answer_waiter(Waiter& waiter);

  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  int port_ = 0;
  std::string name_;  // "store at 127.0.0.1:29500"
  Duration handshake_timeout_;
  std::map<std::string, std::string> data_;
  std::list<Waiter> waiters_;
  std::thread thread_;
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(StoreServer::Impl& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), handshake_timer_(server.io()) {
    peer_ = remote_of(socket_);
  }

  void start() {
    // A connection must say hello within the handshake timeout.
    handshake_timer_.expires_after(server_.handshake_timeout());
    handshake_timer_.async_wait([self = shared_from_this()](ErrorCode error) {
      if (error || self->greeted_ || !self->socket_.is_open()) return;
      self->reject("it sent no hello within " +
                   std::to_string(self->server_.handshake_timeout().count()) + " ms");
    });
    read_header();
  }

  void reply(StoreStatus status, std::int64_t number, const std::vector<std::string_view>& strings) {
    reply_body_ = encode_strings(strings);
    reply_header_ = encode_store_header(
        {false, static_cast<std::uint16_t>(status), static_cast<std::uint32_t>(reply_body_.size()),
         number});
    std::vector<asio::const_buffer> buffers{asio::buffer(reply_header_), asio::buffer(reply_body_)};
    asio::async_write(socket_, buffers,
                      [self = shared_from_this()](ErrorCode error, std::size_t) {
                        if (error) return self->close();
                        self->read_header();
                      });
  }

  void close() {
    ErrorCode ignored;
    handshake_timer_.cancel();
    socket_.close(ignored);
  }

  const std::string& peer() const { return peer_; }

 private:
  void reject(const std::string& why) {
    log_line(server_.name() + ": rejected the connection from " + peer_ + ": " + why);
    close();
    server_.forget(shared_from_this());
  }

  void read_header() {
    asio::async_read(socket_, asio::buffer(header_bytes_),
                     [self = shared_from_this()](ErrorCode error, std::size_t got) {
                       self->on_header(error, got);
                     });
  }

  void on_header(ErrorCode error, std::size_t got) {
    if (error) {
      if (error == asio::error::operation_aborted || !socket_.is_open()) return;
      if (got > 0)
        reject("it closed after " + std::to_string(got) + " of " +
               std::to_string(kStoreHeaderBytes) + " header bytes (truncated request)");
      else if (!greeted_)
        reject("it closed without sending a hello");
      else
        close();  // a client that finished
      return;
    }
    const StoreDecode decoded = decode_store_header(header_bytes_, true);
    if (!decoded.header) return reject(decoded.error);
    header_ = *decoded.header;
    if (!greeted_ && header_.code != static_cast<std::uint16_t>(StoreOp::Hello))
      return reject(std::string("its first request was ") + store_op_name(header_.code) +
                    ", not hello: not a ringlab store client?");
    body_.resize(header_.body_length);
    asio::async_read(socket_, asio::buffer(body_),
                     [self = shared_from_this()](ErrorCode body_error, std::size_t body_got) {
                       self->on_body(body_error, body_got);
                     });
  }

  void on_body(ErrorCode error, std::size_t got) {
    if (error) {
      if (error == asio::error::operation_aborted || !socket_.is_open()) return;
      return reject("it closed after " + std::to_string(got) + " of " +
                    std::to_string(body_.size()) + " body bytes (truncated request)");
    }
    auto args = decode_strings(body_);
    if (!args) return reject("its request body is not a list of length-prefixed strings");
    if (!greeted_) {
      greeted_ = true;
      handshake_timer_.cancel();
    }
    server_.handle(shared_from_this(), header_, std::move(*args));
  }

  StoreServer::Impl& server_;
  tcp::socket socket_;
  asio::steady_timer handshake_timer_;
  std::string peer_;
  bool greeted_ = false;
  StoreHeaderBytes header_bytes_{};
  StoreHeader header_;
  std::vector<std::byte> body_;
  StoreHeaderBytes reply_header_{};
  std::vector<std::byte> reply_body_;
};

std::int64_t parse_counter(const std::string& value, bool& ok) {
  std::int64_t number = 0;
  auto [ptr, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  ok = error == std::errc() && ptr == value.data() + value.size();
  return number;
}

}  // namespace

StoreServer::Impl::Impl(const std::string& bind_addr, int port, Duration handshake_timeout)
    : handshake_timeout_(handshake_timeout) {
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
  accept_next();
  thread_ = std::thread([this] { io_.run(); });
}

StoreServer::Impl::~Impl() {
  io_.stop();
  thread_.join();
  // Break the session <-> waiter references before the io_context goes.
  waiters_.clear();
}

void StoreServer::Impl::accept_next() {
  acceptor_.async_accept([this](ErrorCode error, tcp::socket socket) {
    if (error == asio::error::operation_aborted) return;
    if (!error) {
      ErrorCode ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(*this, std::move(socket))->start();
    }
    accept_next();
  });
}

bool StoreServer::Impl::all_present(const std::vector<std::string>& keys) const {
  for (const auto& key : keys)
    if (!data_.contains(key)) return false;
  return true;
}

void StoreServer::Impl::answer_waiter(Waiter& waiter) {
  if (waiter.op == StoreOp::Get)
    waiter.session->reply(StoreStatus::Ok, 0, {data_.at(waiter.keys.front())});
  else
    waiter.session->reply(StoreStatus::Ok, 0, {});
}

void StoreServer::Impl::wake_waiters() {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (all_present(it->keys)) {
      it->timer->cancel();
      answer_waiter(*it);
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

void StoreServer::Impl::forget(const std::shared_ptr<Session>& session) {
  waiters_.remove_if([&](const Waiter& waiter) { return waiter.session == session; });
}

void StoreServer::Impl::handle(const std::shared_ptr<Session>& session, const StoreHeader& header,
                               std::vector<std::string> args) {
  const auto op = static_cast<StoreOp>(header.code);
  auto fail = [&](const std::string& why) {
    session->reply(StoreStatus::Error, 0, {std::string(store_op_name(header.code)) + ": " + why});
  };
  auto need = [&](std::size_t n) {
    if (args.size() == n) return true;
    fail("expected " + std::to_string(n) + " arguments, got " + std::to_string(args.size()));
    return false;
  };
  switch (op) {
    case StoreOp::Hello:
      session->reply(StoreStatus::Ok, 0, {});
      return;
    case StoreOp::Set:
      if (!need(2)) return;
      data_[args[0]] = std::move(args[1]);
      session->reply(StoreStatus::Ok, 0, {});
      wake_waiters();
      return;
    case StoreOp::Add: {
      if (!need(1)) return;
      std::int64_t value = 0;
      if (auto it = data_.find(args[0]); it != data_.end()) {
        bool ok = false;
        value = parse_counter(it->second, ok);
        if (!ok) return fail("the value of key '" + args[0] + "' is not an integer");
      }
      value += header.number;
      data_[args[0]] = std::to_string(value);
      session->reply(StoreStatus::Ok, value, {});
      wake_waiters();
      return;
    }
    case StoreOp::CompareSet: {
      if (!need(3)) return;
      auto it = data_.find(args[0]);
      if (it == data_.end()) {
        if (args[1].empty()) {
          it = data_.emplace(args[0], std::move(args[2])).first;
          session->reply(StoreStatus::Ok, 0, {it->second});
          wake_waiters();
        } else {
          // TCPStore answers the expected value when the key is absent.
          session->reply(StoreStatus::Ok, 0, {args[1]});
        }
        return;
      }
      if (it->second == args[1]) it->second = std::move(args[2]);
      session->reply(StoreStatus::Ok, 0, {it->second});
      return;
    }
    case StoreOp::Get:
    case StoreOp::Wait: {
      if (op == StoreOp::Get && !need(1)) return;
      if (all_present(args)) {
        Waiter now{session, op, std::move(args), nullptr};
        answer_waiter(now);
        return;
      }
      auto& waiter = waiters_.emplace_back(Waiter{session, op, std::move(args),
                                                  std::make_unique<asio::steady_timer>(io_)});
      waiter.timer->expires_after(std::chrono::milliseconds(std::max<std::int64_t>(header.number, 0)));
      waiter.timer->async_wait([this, session](ErrorCode error) {
        if (error) return;  // answered (cancelled) before the time ran out
        auto it = std::find_if(waiters_.begin(), waiters_.end(),
                               [&](const Waiter& w) { return w.session == session; });
        if (it == waiters_.end()) return;
        std::vector<std::string_view> missing;
        for (const auto& key : it->keys)
          if (!data_.contains(key)) missing.push_back(key);
        session->reply(StoreStatus::Timeout, 0, missing);
        waiters_.erase(it);
      });
      return;
    }
    case StoreOp::Check: {
      session->reply(StoreStatus::Ok, all_present(args) ? 1 : 0, {});
      return;
    }
    case StoreOp::Delete:
      if (!need(1)) return;
      session->reply(StoreStatus::Ok, data_.erase(args[0]) ? 1 : 0, {});
      return;
    case StoreOp::NumKeys:
      session->reply(StoreStatus::Ok, static_cast<std::int64_t>(data_.size()), {});
      return;
  }
}

StoreServer::StoreServer(const std::string& bind_addr, int port, Duration handshake_timeout)
    : impl_(std::make_unique<Impl>(bind_addr, port, handshake_timeout)) {}
StoreServer::~StoreServer() = default;
int StoreServer::port() const { return impl_->port(); }

}  // namespace ringlab::tcp
