// The names the TCP transport's rendezvous and mesh use for Boost.Asio, and
// the store's socket helpers (store/socket_util.hpp) they share.
#pragma once

#include "store/socket_util.hpp"

namespace ringlab::tcp {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

using store::ms_left;
using store::remote_of;
using store::resolve;

}  // namespace ringlab::tcp
