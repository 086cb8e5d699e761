// The names the store's server and clients use for Boost.Asio, and the socket
// helpers (net/socket_util.hpp) they share with the TCP transport.
#pragma once

#include "net/socket_util.hpp"

namespace ringlab::store {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

using net::connect_until;
using net::deadline_after;
using net::ms_left;
using net::read_until;
using net::remote_of;
using net::resolve;
using net::run_until;
using net::to_string;
using net::write_until;

}  // namespace ringlab::store
