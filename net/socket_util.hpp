// Small Boost.Asio helpers that the store and the TCP transport's rendezvous
// share: name resolution with readable errors, blocking-style socket calls
// that give up at a deadline, and endpoint printing. Not on the transport's
// hot path (that is transport/tcp/engine.cpp, which polls non-blocking
// sockets itself).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "net/asio.hpp"
#include "ops/comm_error.hpp"

namespace ringlab::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

// host:port -> endpoints; throws CommError naming host and port and `role`.
tcp::resolver::results_type resolve(asio::io_context& io, const std::string& host, int port,
                                    const std::string& role);

// Starts one asynchronous operation with start(callback) and runs io until it
// completes or `deadline` passes; on the deadline cancels the socket's work
// and returns asio::error::timed_out. Returns the operation's error code.
ErrorCode run_until(asio::io_context& io, tcp::socket& socket, Clock::time_point deadline,
                    const std::function<void(std::function<void(ErrorCode)>)>& start);

ErrorCode read_until(asio::io_context& io, tcp::socket& socket, asio::mutable_buffer buffer,
                     Clock::time_point deadline);
ErrorCode write_until(asio::io_context& io, tcp::socket& socket,
                      const std::vector<asio::const_buffer>& buffers, Clock::time_point deadline);
// Tries once to connect to any of the endpoints before the deadline.
ErrorCode connect_until(asio::io_context& io, tcp::socket& socket,
                        const tcp::resolver::results_type& endpoints, Clock::time_point deadline);

// "127.0.0.1:43122", or "an unknown peer" if the socket has none.
std::string remote_of(const tcp::socket& socket);
std::string to_string(const tcp::endpoint& endpoint);

// Milliseconds left until deadline (0 if past).
long long ms_left(Clock::time_point deadline);

// now + limit + extra, saturating: the farthest time_point when the sum does
// not fit (a timeout of INT64_MAX ms waits "forever" rather than overflowing
// into the past). A negative sum is now.
Clock::time_point deadline_after(Duration limit, Duration extra = Duration::zero());

}  // namespace ringlab::net
