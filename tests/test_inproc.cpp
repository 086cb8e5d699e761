// What is particular to the in-process transport: InprocWorld's own checks,
// fail(), and what run_world rethrows. The Transport contract itself
// (matching, ordering, sizes, timeouts, failures) is checked by the
// conformance suite (test_transport_conformance.cpp, program
// test_transport_inproc).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "transport/inproc.hpp"

using namespace ringlab;
using namespace std::chrono_literals;

TEST_CASE("InprocWorld refuses a world size below 1 and ranks outside the world") {
  CHECK_THROWS_WITH_AS(InprocWorld(0), "world size must be at least 1, got 0",
                       std::invalid_argument);
  InprocWorld world(2);
  CHECK(world.size() == 2);
  CHECK_THROWS_WITH_AS(world.connect(2), "rank 2 is not in 0..1", std::invalid_argument);
  CHECK_THROWS_AS(world.connect(-1), std::invalid_argument);
}

TEST_CASE(
    "InprocWorld::fail wakes a waiting rank at once with a PeerError naming the failed rank") {
  InprocWorld world(3);
  auto waiting = world.connect(0);
  std::string error;
  int peer = -1;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    std::byte b{};
    try {
      waiting->irecv(1, 5, {&b, 1})->wait(10s);
    } catch (const PeerError& e) {
      error = e.what();
      peer = e.peer();
    }
  });
  std::this_thread::sleep_for(50ms);
  world.fail(2, "rank 2 lost its GPU");
  waiter.join();
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(peer == 2);
  CHECK(error == "rank 0 stopped waiting for rank 1 (tag 5) because rank 2 failed");
}

TEST_CASE("run_world rethrows the failure that came first, not the PeerErrors it caused") {
  std::atomic<int> peer_errors{0};
  CHECK_THROWS_WITH_AS(run_world(
                           4,
                           [&](Transport& t) {
                             if (t.rank() == 2) throw std::runtime_error("rank 2 broke");
                             std::byte b{};
                             try {
                               t.recv(2, 0, {&b, 1});
                             } catch (const PeerError&) {
                               ++peer_errors;
                               throw;
                             }
                           },
                           10s),
                       "rank 2 broke", std::runtime_error);
  CHECK(peer_errors == 3);
}
