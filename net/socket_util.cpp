// Deadline-bounded Boost.Asio calls for the store and the TCP rendezvous (see
// socket_util.hpp). Each runs the caller's private io_context until its one
// operation completes, so no thread is involved.
#include "net/socket_util.hpp"

#include <optional>

namespace ringlab::net {

tcp::resolver::results_type resolve(asio::io_context& io, const std::string& host, int port,
                                    const std::string& role) {
  tcp::resolver resolver(io);
  ErrorCode error;
  auto results = resolver.resolve(host, std::to_string(port), error);
  if (error || results.empty())
    throw CommError("cannot resolve " + role + " address " + host + ":" + std::to_string(port) +
                    " (" + error.message() + "): check the host name");
  return results;
}

ErrorCode run_until(asio::io_context& io, tcp::socket& socket, Clock::time_point deadline,
                    const std::function<void(std::function<void(ErrorCode)>)>& start) {
  std::optional<ErrorCode> result;
  start([&result](ErrorCode error) { result = error; });
  io.restart();
  while (!result && Clock::now() < deadline) io.run_one_until(deadline);
  if (result) return *result;
  // Out of time: cancel, and let the cancelled handler run so nothing refers
  // to this frame afterwards.
  ErrorCode ignored;
  socket.cancel(ignored);
  io.restart();
  while (!result) io.run_one();
  return asio::error::timed_out;
}

ErrorCode read_until(asio::io_context& io, tcp::socket& socket, asio::mutable_buffer buffer,
                     Clock::time_point deadline) {
  return run_until(io, socket, deadline, [&](auto done) {
    asio::async_read(socket, buffer, [done](ErrorCode error, std::size_t) { done(error); });
  });
}

ErrorCode write_until(asio::io_context& io, tcp::socket& socket,
                      const std::vector<asio::const_buffer>& buffers, Clock::time_point deadline) {
  return run_until(io, socket, deadline, [&](auto done) {
    asio::async_write(socket, buffers, [done](ErrorCode error, std::size_t) { done(error); });
  });
}

ErrorCode connect_until(asio::io_context& io, tcp::socket& socket,
                        const tcp::resolver::results_type& endpoints, Clock::time_point deadline) {
  return run_until(io, socket, deadline, [&](auto done) {
    asio::async_connect(socket, endpoints,
                        [done](ErrorCode error, const tcp::endpoint&) { done(error); });
  });
}

std::string to_string(const tcp::endpoint& endpoint) {
  const auto address = endpoint.address();
  const std::string host = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  return host + ":" + std::to_string(endpoint.port());
}

std::string remote_of(const tcp::socket& socket) {
  ErrorCode error;
  const auto endpoint = socket.remote_endpoint(error);
  return error ? std::string("an unknown peer") : to_string(endpoint);
}

long long ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? left.count() : 0;
}

Clock::time_point deadline_after(Duration limit, Duration extra) {
  const auto now = Clock::now();
  const auto room = std::chrono::duration_cast<Duration>(Clock::time_point::max() - now);
  if (limit > Duration::zero() && extra > Duration::zero() && limit > Duration::max() - extra)
    return Clock::time_point::max();
  const Duration total = limit + extra;
  if (total <= Duration::zero()) return now;
  if (total >= room) return Clock::time_point::max();
  return now + total;
}

}  // namespace ringlab::net
