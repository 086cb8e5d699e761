// The store against clients that try to exhaust it (issue 12, items 1 and 2):
// bodies claimed and never sent, requests that stall, connections that idle,
// a store filled to its limit, an allocation that fails, waits abandoned by
// clients that leave, and a flood of junk connections at the descriptor
// limit. Each test reproduces one attack and checks that the store's process
// stays bounded and alive and that a legitimate client is still served.
// The tests that squeeze or measure the store's process run it apart
// (tests/store_host.cpp, tests/child_store.hpp).
#include <dirent.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "child_store.hpp"
#include "store/store.hpp"
#include "store_util.hpp"
#include "store_wire.hpp"

using namespace ringlab;
using namespace ringlab::store;
using namespace ringlab::store::testing;
using namespace std::chrono_literals;

namespace {

// Under AddressSanitizer (tools/test.sh --sanitize) operator new does not
// throw std::bad_alloc when memory runs out: ASan's allocator reports and
// aborts. The test of a failed allocation on the store thread cannot run there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

int open_descriptors() {
  int count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (::readdir(dir)) ++count;
    ::closedir(dir);
  }
  return count - 3;  // ".", ".." and the directory's own descriptor
}

// A client that does what a rank does: set, then get it back.
void use_the_store(int port, const std::string& key, Duration timeout = 10s) {
  StoreClient store("127.0.0.1", port, timeout);
  store.set(key, "value of " + key);
  CHECK(store.get(key) == "value of " + key);
}

// Sets keys "key/0", "key/1", ... with empty values from `clients` clients at
// once, until the store refuses one or `most` are set. Returns how many were
// set and the first refusal ("" if none).
std::pair<long, std::string> fill_with_keys(int port, long most, int clients = 4) {
  std::atomic<long> next{0}, set{0};
  std::mutex mutex;
  std::string refusal;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&] {
      StoreClient store("127.0.0.1", port, 10s);
      for (long i; (i = next++) < most;) {
        try {
          store.set("key/" + std::to_string(i), "");
          ++set;
        } catch (const CommError& error) {
          std::lock_guard lock(mutex);
          if (refusal.empty()) refusal = error.what();
          next = most;
        }
      }
    });
  for (auto& thread : threads) thread.join();
  return {set.load(), refusal};
}

}  // namespace

TEST_SUITE("store_limits") {
  // Item 1: 20 connections that each claim a 64 MiB body and stall took rank 0
  // from 4 MiB to 1.3 GiB.
  TEST_CASE("bodies claimed and not sent cost the store nothing: 20 stalled 64 MiB claims") {
    ChildStore host({});
    const long long before_kib = host.resident_kib();
    std::vector<std::unique_ptr<StoreWire>> stalled;
    for (int i = 0; i < 20; ++i) {
      auto wire = std::make_unique<StoreWire>(host.port());
      REQUIRE(wire->hello());
      wire->send_header(StoreOp::Set, 64u << 20);
      wire->send("\x03\x00\x00\x00key", 7);  // then nothing
      stalled.push_back(std::move(wire));
    }
    std::this_thread::sleep_for(300ms);  // what the store does with them, it has done
    const long long after_kib = host.resident_kib();
    MESSAGE("the store's resident memory: " << before_kib << " KiB, with 20 stalled claims "
                                            << after_kib << " KiB");
    CHECK(host.alive());
    CHECK(after_kib - before_kib < 16 * 1024);
    use_the_store(host.port(), "still served");
  }

  TEST_CASE("after hello, a stalled request and an idle connection are closed") {
    LogCapture log;
    StoreLimits limits;
    limits.request_timeout = 300ms;
    limits.idle_timeout = 400ms;
    StoreServer server("127.0.0.1", 0, 5s, limits);

    SUBCASE("a request that stops half way") {
      StoreWire wire(server.port());
      REQUIRE(wire.hello());
      wire.send_header(StoreOp::Set, 1000);
      wire.send("0123456789", 10);
      CHECK(wire.closed_within(3s));
      CHECK(log.wait_for({"rejected the connection from 127.0.0.1:",
                          "it sent only 34 of the 1024 bytes of its request within 300 ms"}));
    }
    SUBCASE("a header that stops half way") {
      StoreWire wire(server.port());
      REQUIRE(wire.hello());
      wire.send("RLSQ", 4);
      CHECK(wire.closed_within(3s));
      CHECK(log.wait_for({"it sent only 4 of the 24 bytes of its request within 300 ms"}));
    }
    SUBCASE("a connection that says nothing after its hello") {
      StoreWire wire(server.port());
      REQUIRE(wire.hello());
      const auto notice = wire.read_reply(3s);
      REQUIRE(notice);
      CHECK(notice->status == StoreStatus::Closing);
      CHECK(wire.closed_within(3s));
    }
    SUBCASE("a client idle past the limit reconnects by itself") {
      StoreClient store("127.0.0.1", server.port(), 2s);
      store.set("k", "v");
      std::this_thread::sleep_for(700ms);  // the store has closed this connection
      CHECK(store.get("k") == "v");
      CHECK(store.add("n", 2) == 2);  // run once, not again on the new connection
      std::this_thread::sleep_for(700ms);
      CHECK(store.add("n", 3) == 5);
    }
    use_the_store(server.port(), "still served");
  }

  TEST_CASE(
      "a client whose idle connection was closed, and whose store is then gone, fails at once") {
    StoreLimits limits;
    limits.idle_timeout = 200ms;
    auto server = std::make_unique<StoreServer>("127.0.0.1", 0, 5s, limits);
    StoreClient store("127.0.0.1", server->port(), 10s);
    store.set("k", "v");
    std::this_thread::sleep_for(500ms);  // closed as idle
    server.reset();
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(store.get("k"),
                         doctest::Contains("it closed this client's idle connection, and now "
                                           "nothing listens there: rank 0, which hosts the store, "
                                           "probably exited"),
                         CommError);
    CHECK(std::chrono::steady_clock::now() - start < 2s);  // not the 10 s timeout
  }

  TEST_CASE("the store's contents have a limit; a refused set leaves the store serving") {
    StoreLimits limits;
    limits.max_total_bytes = 1 << 20;
    limits.max_request_bytes = 512 << 10;
    StoreServer server("127.0.0.1", 0, 5s, limits);
    StoreClient store("127.0.0.1", server.port(), 2s);
    const std::string quarter(300 << 10, 'q');
    store.set("a", quarter);
    store.set("b", quarter);
    store.set("c", quarter);
    // Each key counts its name and value (1 + 307200 bytes) and its
    // bookkeeping (192 bytes): 3 x 307393 = 922179, and the request's
    // 4 + 1 + 4 + 307200 = 307209 bytes would make 1229388 > 1048576.
    CHECK_THROWS_WITH_AS(store.set("d", quarter),
                         doctest::Contains("set: the store is full: its 3 keys (921603 bytes of "
                                           "names and values, 576 of bookkeeping at 192 a key) "
                                           "and this request (307209 bytes) would pass its limit "
                                           "of 1048576 bytes"),
                         CommError);
    CHECK(store.get("a") == quarter);  // the same connection goes on
    CHECK_FALSE(store.check({"d"}));
    CHECK(store.delete_key("a"));
    store.set("d", quarter);
    CHECK(store.get("d") == quarter);

    CHECK_THROWS_WITH_AS(store.set("big", std::string(600 << 10, 'b')),
                         doctest::Contains("set: a request of 614411 bytes is more than the store "
                                           "takes (524288 bytes, key and value together)"),
                         CommError);
    CHECK_THROWS_WITH_AS(store.set(std::string(5000, 'k'), "v"),
                         doctest::Contains("set: a key of 5000 bytes is longer than the store "
                                           "takes (4096 bytes)"),
                         CommError);
    CHECK(store.get("b") == quarter);
    CHECK(store.num_keys() == 3);
  }

  // Issue 21, item 4: 3 M keys with empty values grew the store from 12 to
  // 470 MiB while it counted about 26 MB of them against its 256 MiB: a key's
  // bookkeeping (about 150 bytes) was not counted. Under a 16 MiB budget the
  // store took 400,000 such keys (about 60 MiB) before any was refused.
  TEST_CASE("keys count at their real cost: the store's memory stays within its budget") {
    ChildStore host({"--max-total-mib", "16"});
    const long long before_kib = host.resident_kib();
    const auto [set, refusal] = fill_with_keys(host.port(), 400000);
    const long long grown_kib = host.resident_kib() - before_kib;
    MESSAGE("set " << set << " keys; the store's resident memory grew by " << grown_kib
                   << " KiB; then: " << refusal);
    CHECK(refusal.find("set: the store is full: its " + std::to_string(set) + " keys (") !=
          std::string::npos);
    // Refused once its memory reached the budget, not many times past it
    // (ASan's allocator pads every allocation: there the bound is not this).
    if (!kAddressSanitizer) CHECK(grown_kib <= 16 * 1024 + 2048);
    // ... and not long before: at least half the budget holds keys, at the
    // issue's (470 - 12) MiB / 3 M keys = 160 bytes a key.
    CHECK(set * 160 >= 8 << 20);
    // It goes on serving: what it holds, and a new key once there is room.
    REQUIRE(host.alive());
    StoreClient store("127.0.0.1", host.port(), 10s);
    CHECK(store.get("key/0") == "");
    CHECK(store.num_keys() == set);
    for (int i = 0; i < 10; ++i) CHECK(store.delete_key("key/" + std::to_string(i)));
    store.set("after", "room again");
    CHECK(store.get("after") == "room again");
  }

  TEST_CASE("a new key is refused when its bookkeeping would pass the budget") {
    // Keys "k0" to "k4" with empty values cost 2 + 0 + 192 = 194 bytes each:
    // five make 970 bytes of 1000, and a sixth would make 1164.
    StoreLimits limits;
    limits.max_total_bytes = 1000;
    StoreServer server("127.0.0.1", 0, 5s, limits);
    StoreClient store("127.0.0.1", server.port(), 5s);
    for (int i = 0; i < 5; ++i) store.set("k" + std::to_string(i), "");
    CHECK_THROWS_WITH_AS(store.set("k5", ""),
                         doctest::Contains("set: the store is full: its 5 keys (10 bytes of names "
                                           "and values, 960 of bookkeeping at 192 a key) and "
                                           "this new key with its bookkeeping (194 bytes) would "
                                           "pass its limit of 1000 bytes"),
                         CommError);
    CHECK(store.num_keys() == 5);
    // 30 bytes of value for k0 fit (970 + 30 = 1000); 31 would not.
    store.set("k0", std::string(30, 'v'));
    CHECK_THROWS_WITH_AS(store.set("k1", std::string(31, 'v')),
                         doctest::Contains("set: the store is full: its 5 keys (40 bytes of names "
                                           "and values, 960 of bookkeeping at 192 a key) and "
                                           "this value's growth (31 bytes) would pass its limit "
                                           "of 1000 bytes"),
                         CommError);
    CHECK(store.delete_key("k0"));
    store.set("k5", "");
    CHECK(store.num_keys() == 5);
  }

  TEST_CASE("the store holds at most max_keys keys, and says so when it refuses one") {
    StoreLimits limits;
    limits.max_keys = 100;
    StoreServer server("127.0.0.1", 0, 5s, limits);
    StoreClient store("127.0.0.1", server.port(), 5s);
    for (int i = 0; i < 100; ++i) store.set("key/" + std::to_string(i), "v");
    const std::string refused =
        "the store holds 100 keys, as many as it takes (StoreLimits::max_keys): it takes no new "
        "key until one is deleted";
    CHECK_THROWS_WITH_AS(store.set("one more", "v"), doctest::Contains(("set: " + refused).c_str()),
                         CommError);
    CHECK_THROWS_WITH_AS(store.add("counter", 1), doctest::Contains(("add: " + refused).c_str()),
                         CommError);
    CHECK_THROWS_WITH_AS(store.compare_set("cas", "", "v"),
                         doctest::Contains(("compare_set: " + refused).c_str()), CommError);
    CHECK(store.num_keys() == 100);
    // The keys it holds can still change, and a deleted key makes room.
    store.set("key/7", "another value");
    CHECK(store.get("key/7") == "another value");
    CHECK(store.delete_key("key/0"));
    store.set("one more", "v");
    CHECK(store.get("one more") == "v");
    StoreClient other("127.0.0.1", server.port(), 5s);  // another client is served
    CHECK(other.get("key/1") == "v");
  }

  // Issue 21, item 4 asks for the key cap in README's limits table: the
  // table's row and the defaults must say the same.
  TEST_CASE(
      "README's limits table gives the key cap and a key's bookkeeping as the code has them") {
    std::ifstream file(RINGLAB_SOURCE_DIR "/README.md");
    std::stringstream readme;
    readme << file.rdbuf();
    CHECK(readme.str().find("| keys in one store | 1,048,576 (2^20)") != std::string::npos);
    CHECK(StoreLimits{}.max_keys == 1'048'576);
    CHECK(readme.str().find("192 bytes of bookkeeping, `kKeyOverheadBytes`") != std::string::npos);
    CHECK(kKeyOverheadBytes == 192);
  }

  // Item 1: under a memory limit, std::bad_alloc on the store thread aborted
  // rank 0 and the whole job with it.
  TEST_CASE("an allocation that fails on the store thread fails the request, not the process" *
            doctest::skip(kAddressSanitizer)) {
    ChildStore host({"--headroom-mib", "48"});
    {
      StoreClient store("127.0.0.1", host.port(), 10s);
      CHECK_THROWS_WITH_AS(store.set("huge", std::string(60 << 20, 'h')),
                           doctest::Contains("set: the store is out of memory"), CommError);
      CHECK_FALSE(store.check({"huge"}));  // the same connection goes on
    }
    INFO("the store's process " << host.ended());
    REQUIRE(host.alive());
    use_the_store(host.port(), "after the failed allocation");
  }

  // Item 2: 300 clients that parked a wait and left kept 300 descriptors.
  TEST_CASE("a client that leaves while its wait is parked is forgotten, with its descriptor") {
    StoreServer server("127.0.0.1", 0);
    { use_the_store(server.port(), "warm up"); }
    const int before = open_descriptors();
    {
      std::vector<std::unique_ptr<StoreWire>> waiting;
      for (int i = 0; i < 300; ++i) {
        waiting.push_back(std::make_unique<StoreWire>(server.port()));
        REQUIRE(waiting.back()->hello());
        waiting.back()->request(StoreOp::Wait, {"never set"}, 3'600'000);
      }
      std::this_thread::sleep_for(200ms);  // every wait is parked
      for (std::size_t i = 0; i < waiting.size(); ++i)
        i % 2 ? waiting[i]->close() : waiting[i]->abort();  // end of stream, or a reset
    }
    int now = open_descriptors();
    for (int i = 0; i < 300 && now > before + 2; ++i) {
      std::this_thread::sleep_for(10ms);
      now = open_descriptors();
    }
    MESSAGE("open descriptors: " << before << ", after 300 abandoned waits " << now);
    CHECK(now <= before + 2);
    use_the_store(server.port(), "still served");
  }

  // Item 2: at the descriptor limit, accept failed at once and was retried at
  // once: the store thread sat at 100 % CPU and legitimate clients timed out.
  TEST_CASE("at the descriptor limit the store backs off; a legitimate client is still served") {
    // 64 descriptors: about 55 connections before accept fails with EMFILE.
    ChildStore host({"--nofile", "64", "--handshake-ms", "800"});

    // 1. 300 connections that say one byte and stall: the store cannot take
    //    them all, and none of those it took may be dropped for a newcomer.
    std::vector<std::unique_ptr<StoreWire>> stalled;
    for (int i = 0; i < 300; ++i) {
      stalled.push_back(std::make_unique<StoreWire>(host.port()));
      stalled.back()->send("R", 1);
    }
    std::this_thread::sleep_for(100ms);
    const double cpu_before = host.cpu_seconds();
    std::this_thread::sleep_for(1s);
    const double busy = host.cpu_seconds() - cpu_before;
    MESSAGE("the store's CPU time over 1 s at its descriptor limit: " << busy << " s");
    CHECK(busy < 0.3);
    for (auto& wire : stalled) wire->abort();
    stalled.clear();
    use_the_store(host.port(), "after the stalled ones");

    // 2. 20,000 junk connections, at most 200 open at a time, saying nothing;
    //    meanwhile a client does what a rank does, again and again.
    std::atomic<bool> junk_done{false};
    std::atomic<int> served_during_junk{0};
    std::thread junk([&] {
      std::vector<std::unique_ptr<StoreWire>> open;
      for (int attempt = 0; attempt < 20000; ++attempt) {
        try {
          open.push_back(std::make_unique<StoreWire>(host.port()));
        } catch (const std::exception&) {
          // refused or reset: the attempt counts
        }
        if (open.size() >= 200) {
          open.front()->abort();
          open.erase(open.begin());
        }
      }
      for (auto& wire : open) wire->abort();
      junk_done = true;
    });
    std::string failure;
    for (int round = 0; round < 20 && failure.empty(); ++round) {
      try {
        StoreClient store("127.0.0.1", host.port(), 10s);
        store.set("round", std::to_string(round));
        if (store.get("round") != std::to_string(round)) failure = "a wrong value";
        if (!junk_done) ++served_during_junk;
      } catch (const std::exception& error) {
        failure = error.what();
      }
    }
    junk.join();
    CHECK(failure == "");
    MESSAGE("rounds served while 20,000 junk connections were being made: "
            << served_during_junk.load() << " of 20");
    CHECK(served_during_junk > 0);
    CHECK(host.alive());
  }

}  // TEST_SUITE
