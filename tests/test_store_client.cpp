// The rendezvous store (TCPStore-like): set/get/add/wait/compare_set/check/
// delete, get and wait that block until another client sets the key, timeouts
// that name the missing keys, many concurrent clients, a client that starts
// before the server, and garbage on the store's port that is logged and
// closed without disturbing the real clients.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#include "store/protocol.hpp"
#include "store/store.hpp"
#include "store_util.hpp"

using namespace ringlab;
using namespace ringlab::store;
using namespace ringlab::store::testing;
using namespace std::chrono_literals;

TEST_SUITE("store_client") {

TEST_CASE("set, get, add, check, delete, num_keys") {
  StoreServer server("127.0.0.1", 0);
  StoreClient store("127.0.0.1", server.port(), 2s);
  CHECK(store.address() == "127.0.0.1:" + std::to_string(server.port()));
  store.set("a", "hello");
  CHECK(store.get("a") == "hello");
  store.set("a", "again");  // overwrite
  CHECK(store.get("a") == "again");
  const std::string binary("\0\x01\xff\0", 4);
  store.set("bin", binary);
  CHECK(store.get("bin") == binary);
  const std::string big(1 << 20, 'x');
  store.set("big", big);
  CHECK(store.get("big") == big);

  CHECK(store.add("n", 5) == 5);
  CHECK(store.add("n", -2) == 3);
  CHECK(store.get("n") == "3");
  CHECK_THROWS_WITH_AS(store.add("a", 1), doctest::Contains("the value of key 'a' is not an integer"),
                       CommError);

  CHECK(store.check({"a", "n"}));
  CHECK_FALSE(store.check({"a", "absent"}));
  CHECK(store.num_keys() == 4);
  CHECK(store.delete_key("a"));
  CHECK_FALSE(store.delete_key("a"));
  CHECK_FALSE(store.check({"a"}));
  CHECK(store.num_keys() == 3);
}

TEST_CASE("compare_set follows TCPStore") {
  StoreServer server("127.0.0.1", 0);
  StoreClient store("127.0.0.1", server.port(), 2s);
  // Absent and expected empty: set.
  CHECK(store.compare_set("k", "", "first") == "first");
  // Present, expected matches: replaced.
  CHECK(store.compare_set("k", "first", "second") == "second");
  // Present, expected differs: unchanged, the current value comes back.
  CHECK(store.compare_set("k", "first", "third") == "second");
  CHECK(store.get("k") == "second");
  // Absent and expected not empty: not set, the expected value comes back.
  CHECK(store.compare_set("other", "x", "y") == "x");
  CHECK_FALSE(store.check({"other"}));
}

TEST_CASE("get and wait block until another client sets the keys") {
  StoreServer server("127.0.0.1", 0);
  StoreClient waiter("127.0.0.1", server.port(), 2s);
  std::thread setter([port = server.port()] {
    StoreClient store("127.0.0.1", port, 2s);
    std::this_thread::sleep_for(100ms);
    store.set("x", "1");
    std::this_thread::sleep_for(50ms);
    store.add("y", 7);
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK(waiter.get("x", 3s) == "1");
  CHECK(std::chrono::steady_clock::now() - start >= 90ms);
  waiter.wait({"x", "y"}, 3s);
  CHECK(waiter.get("y") == "7");
  setter.join();
}

TEST_CASE("timeouts name the missing keys and leave the connection usable") {
  StoreServer server("127.0.0.1", 0);
  StoreClient store("127.0.0.1", server.port(), 2s);
  store.set("here", "1");
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(store.get("absent", 150ms),
                       doctest::Contains("timed out after 150 ms waiting for key(s) 'absent'"),
                       TimeoutError);
  CHECK(std::chrono::steady_clock::now() - start >= 150ms);
  CHECK_THROWS_WITH_AS(store.wait({"here", "p", "q"}, 100ms),
                       doctest::Contains("waiting for key(s) 'p', 'q' in the store at 127.0.0.1:"),
                       TimeoutError);
  CHECK(store.get("here") == "1");
}

TEST_CASE("many clients at once") {
  StoreServer server("127.0.0.1", 0);
  constexpr int kClients = 16, kAdds = 50;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([port = server.port(), c] {
      StoreClient store("127.0.0.1", port, 5s);
      for (int i = 0; i < kAdds; ++i) store.add("counter", 1);
      store.set("done/" + std::to_string(c), "1");
      std::vector<std::string> everyone;
      for (int other = 0; other < kClients; ++other)
        everyone.push_back("done/" + std::to_string(other));
      store.wait(everyone, 5s);
    });
  for (auto& client : clients) client.join();
  StoreClient store("127.0.0.1", server.port(), 2s);
  CHECK(store.add("counter", 0) == kClients * kAdds);
}

TEST_CASE("a client retries until the server starts; then it works") {
  const int port = free_port();
  std::atomic<bool> got{false};
  std::thread early([&] {
    StoreClient store("127.0.0.1", port, 5s);
    got = store.get("k", 5s) == "v";
  });
  std::this_thread::sleep_for(200ms);
  StoreServer server("127.0.0.1", port);
  StoreClient("127.0.0.1", port, 2s).set("k", "v");
  early.join();
  CHECK(got);
}

TEST_CASE("a taken port: hosting the store fails saying what to do") {
  StoreServer first("127.0.0.1", 0);
  CHECK_THROWS_WITH_AS(StoreServer("127.0.0.1", first.port()),
                       doctest::Contains("pick another MASTER_PORT"), CommError);
}

TEST_CASE("garbage on the store's port is logged and closed; real clients carry on") {
  LogCapture log;
  StoreServer server("127.0.0.1", 0, 200ms);
  StoreClient before("127.0.0.1", server.port(), 2s);
  before.set("k", "v");

  SUBCASE("an HTTP request") {
    RawClient garbage(server.port());
    garbage.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(garbage.closed_within(2s));
    CHECK(log.wait_for({"rejected the connection from 127.0.0.1:", "bad magic 47 45 54 20 (expected RLSQ)"}));
  }
  SUBCASE("a truncated header") {
    RawClient garbage(server.port());
    garbage.send("RLSQ\x01\x00", 6);
    garbage.close();
    CHECK(log.wait_for({"closed after 6 of 24 header bytes (truncated request)"}));
  }
  SUBCASE("an absurd length") {
    RawClient garbage(server.port());
    const auto header = encode_store_header({true, 1, 0xFFFFFFF0u, 0});
    garbage.send(header.data(), header.size());
    CHECK(garbage.closed_within(2s));
    CHECK(log.wait_for({"absurd body length 4294967280 bytes"}));
  }
  SUBCASE("a request before hello") {
    RawClient garbage(server.port());
    const auto header = encode_store_header({true, static_cast<std::uint16_t>(StoreOp::NumKeys), 0, 0});
    garbage.send(header.data(), header.size());
    CHECK(garbage.closed_within(2s));
    CHECK(log.wait_for({"its first request was num_keys, not hello"}));
  }
  SUBCASE("a connection that says nothing") {
    RawClient silent(server.port());
    CHECK(silent.closed_within(2s));
    CHECK(log.wait_for({"it sent no hello within 200 ms"}));
  }
  // The store still serves the client that was there and new ones.
  CHECK(before.get("k") == "v");
  StoreClient after("127.0.0.1", server.port(), 2s);
  CHECK(after.get("k") == "v");
  CHECK(after.add("n", 1) == 1);
}

TEST_CASE("a server that goes away: clients fail naming the store, not hang") {
  auto server = std::make_unique<StoreServer>("127.0.0.1", 0);
  const int port = server->port();
  StoreClient store("127.0.0.1", port, 1s);
  store.set("k", "v");
  std::thread killer([&] {
    std::this_thread::sleep_for(100ms);
    server.reset();
  });
  const auto start = std::chrono::steady_clock::now();
  const std::string lost = "lost the connection to the store at 127.0.0.1:" + std::to_string(port);
  CHECK_THROWS_WITH_AS(store.get("never", 5s), doctest::Contains(lost.c_str()), CommError);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  killer.join();
}

// Issue 12, item 3: add past INT64_MAX was signed overflow (UBSan), and a
// wait of INT64_MAX ms overflowed in chrono and timed out at once.
TEST_CASE("add refuses to overflow; the largest timeouts wait, not time out at once") {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  StoreServer server("127.0.0.1", 0);
  StoreClient store("127.0.0.1", server.port(), 2s);
  CHECK(store.add("n", kMax) == kMax);
  CHECK_THROWS_WITH_AS(store.add("n", 1),
                       doctest::Contains("add: key 'n' holds 9223372036854775807, and adding 1 "
                                         "would overflow a signed 64-bit integer"),
                       CommError);
  CHECK(store.get("n") == "9223372036854775807");  // unchanged
  CHECK(store.add("m", kMin) == kMin);
  CHECK_THROWS_WITH_AS(store.add("m", -1), doctest::Contains("would overflow"), CommError);
  CHECK(store.add("m", kMax) == -1);

  std::thread setter([port = server.port()] {
    std::this_thread::sleep_for(200ms);
    StoreClient("127.0.0.1", port, 2s).set("later", "here");
  });
  const auto start = std::chrono::steady_clock::now();
  store.wait({"later"}, Duration::max());
  CHECK(store.get("later", Duration(kMax)) == "here");
  CHECK(std::chrono::steady_clock::now() - start >= 150ms);
  setter.join();

  // A client whose own timeout is the largest there is still works.
  StoreClient patient("127.0.0.1", server.port(), Duration::max());
  patient.set("p", "1");
  CHECK(patient.get("p") == "1");
  // A negative wait is no wait.
  CHECK_THROWS_AS(store.get("absent", Duration(-5)), TimeoutError);
}

// Issue 12, item 10: "last error: Connection timed out" hid a refused
// connection and a garbled reply from a server that is not a ringlab store.
TEST_CASE("a store that cannot be reached: the error says what really happened") {
  SUBCASE("nothing listens on the port") {
    const int port = free_port();
    std::string message;
    try {
      StoreClient("127.0.0.1", port, 300ms);
    } catch (const CommError& error) {
      message = error.what();
    }
    CHECK(message.find("could not reach the store at 127.0.0.1:" + std::to_string(port) +
                       " within 300 ms") == 0);
    CHECK(message.find("connection refused: nothing listens there") != std::string::npos);
    CHECK(message.find("timed out") == std::string::npos);
  }
  SUBCASE("something that is not a ringlab store answers") {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    const int port = acceptor.local_endpoint().port();
    std::thread http([&] {
      auto socket = acceptor.accept();
      char request[64];
      socket.read_some(boost::asio::buffer(request));
      boost::asio::write(socket, boost::asio::buffer(std::string(
                                     "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")));
    });
    std::string message;
    const auto start = std::chrono::steady_clock::now();
    try {
      StoreClient("127.0.0.1", port, 3s);
    } catch (const WrongStoreError& error) {  // not worth trying again
      message = error.what();
    }
    http.join();
    CHECK(message.find("the server at 127.0.0.1:" + std::to_string(port) +
                       " is not a ringlab store: its answer to hello has bad magic 48 54 54 50 "
                       "(expected RLSR)") != std::string::npos);
    CHECK(message.find("timed out") == std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < 2s);  // no point in trying again
  }
  SUBCASE("something accepts and never answers") {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    const int port = acceptor.local_endpoint().port();
    std::string message;
    try {
      StoreClient("127.0.0.1", port, 300ms);
    } catch (const CommError& error) {
      message = error.what();
    }
    CHECK(message.find("the server at 127.0.0.1:" + std::to_string(port) +
                       " accepted the connection but did not answer hello") != std::string::npos);
  }
}

}  // TEST_SUITE
