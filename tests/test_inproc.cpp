// The in-process transport: matching by (source, tag), FIFO order, sendrecv in
// a ring, timeouts and failures that name the ranks.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "transport/inproc.hpp"

using namespace ringlab;
using namespace std::chrono_literals;

namespace {
ConstBytes as_bytes(const std::vector<int>& v) { return std::as_bytes(std::span(v)); }
MutBytes as_bytes(std::vector<int>& v) { return std::as_writable_bytes(std::span(v)); }
}  // namespace

TEST_CASE("messages match by source and tag, in order, whichever side comes first") {
  run_world(3, [](Transport& t) {
    if (t.rank() == 0) {
      t.send(2, 5, as_bytes(std::vector<int>{1, 2}));
      t.send(2, 5, as_bytes(std::vector<int>{3, 4}));
      t.send(2, 9, as_bytes(std::vector<int>{5, 6}));
    } else if (t.rank() == 1) {
      t.send(2, 5, as_bytes(std::vector<int>{7, 8}));
    } else {
      std::vector<int> a(2), b(2), c(2), d(2);
      t.recv(0, 9, as_bytes(c));  // tag 9 is matched although it was sent last
      t.recv(1, 5, as_bytes(d));
      t.recv(0, 5, as_bytes(a));
      t.recv(0, 5, as_bytes(b));
      CHECK(a == std::vector<int>{1, 2});
      CHECK(b == std::vector<int>{3, 4});
      CHECK(c == std::vector<int>{5, 6});
      CHECK(d == std::vector<int>{7, 8});
    }
  });
}

TEST_CASE("sendrecv around a ring never deadlocks") {
  for (int world : {2, 3, 8}) {
    run_world(world, [](Transport& t) {
      const int right = (t.rank() + 1) % t.size(), left = (t.rank() - 1 + t.size()) % t.size();
      std::vector<int> mine{t.rank()}, got{-1};
      for (int step = 0; step < 100; ++step)
        t.sendrecv(right, step, as_bytes(mine), left, step, as_bytes(got));
      CHECK(got[0] == left);
    });
  }
}

TEST_CASE("a receive that times out names both ranks and the tag") {
  std::string message;
  try {
    run_world(
        2,
        [](Transport& t) {
          if (t.rank() == 1) {
            std::vector<int> x(1);
            t.recv(0, 42, as_bytes(x));
          }
        },
        100ms);
  } catch (const TimeoutError& e) {
    message = e.what();
  }
  CHECK(message.find("rank 1 timed out after 100 ms waiting to receive from rank 0 (tag 42)") !=
        std::string::npos);
}

TEST_CASE("a message of the wrong size is an error naming both ranks") {
  CHECK_THROWS_WITH_AS(run_world(2,
                                 [](Transport& t) {
                                   std::vector<int> x(3);
                                   if (t.rank() == 0) t.send(1, 0, as_bytes(std::vector<int>{1}));
                                   else t.recv(0, 0, as_bytes(x));
                                 }),
                       doctest::Contains("rank 1 expected 12 bytes from rank 0"), CommError);
}

TEST_CASE("when one rank fails, the others stop waiting at once and name it") {
  std::atomic<int> peer_errors{0};
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(run_world(
                           4,
                           [&](Transport& t) {
                             if (t.rank() == 2) throw std::runtime_error("rank 2 broke");
                             std::vector<int> x(1);
                             try {
                               t.recv(2, 0, as_bytes(x));
                             } catch (const PeerError& e) {
                               CHECK(e.peer() == 2);
                               ++peer_errors;
                               throw;
                             }
                           },
                           10s),
                       "rank 2 broke", std::runtime_error);
  CHECK(peer_errors == 3);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("bad peers are rejected with the valid range") {
  run_world(2, [](Transport& t) {
    std::vector<int> x(1);
    CHECK_THROWS_WITH_AS(t.send(5, 0, as_bytes(x)), doctest::Contains("valid ranks are 0..1"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(t.recv(t.rank(), 0, as_bytes(x)), doctest::Contains("itself"),
                         std::invalid_argument);
  });
}
