// Boost.Asio, included in one place (by the store and the TCP transport):
// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility>, which fails in C++20 mode unless <utility> comes first. Its test
// for co_await under clang looks only for the Coroutines TS
// (<experimental/coroutine>); clang 14 in C++20 mode has the standard's
// coroutines, which the fuzz build (clang) needs.
//
// Compiled separately (BOOST_ASIO_SEPARATE_COMPILATION): Asio's non-template
// code is compiled once, in net/asio_impl.cpp, instead of in every file
// that includes this one.
#pragma once

#ifndef BOOST_ASIO_SEPARATE_COMPILATION
#define BOOST_ASIO_SEPARATE_COMPILATION 1
#endif

#include <utility>

#if defined(__clang__) && !defined(BOOST_ASIO_HAS_CO_AWAIT) && defined(__cpp_impl_coroutine) && \
    __cpp_impl_coroutine >= 201902 && __has_include(<coroutine>)
#define BOOST_ASIO_HAS_CO_AWAIT 1
#endif

#include <boost/asio.hpp>
