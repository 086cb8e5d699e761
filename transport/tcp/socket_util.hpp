// The names the TCP transport's rendezvous and mesh use for Boost.Asio, and
// the store's socket helpers (net/socket_util.hpp) they share.
#pragma once

#include "net/socket_util.hpp"

namespace ringlab::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

using net::ms_left;
using net::remote_of;
using net::resolve;

}  // namespace ringlab::tcp
