// Boost.Asio, included in one place: Boost 1.74's asio/awaitable.hpp uses
// std::exchange without including <utility>, which fails in C++20 mode unless
// <utility> comes first.
#pragma once

#include <utility>

#include <boost/asio.hpp>
