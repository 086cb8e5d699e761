// What the rendezvous says while it waits: rank 0 logs, once per
// report_interval, which ranks it still waits for ("rank 0: waiting for
// ranks 2-3 (10 s of 30 s)"), in the connecting step and at the end of the
// rendezvous, and says nothing when everyone arrives at once. Ranks are
// threads of this process connected over loopback (test_tcp_util.hpp).
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/token_proof.hpp"
#include "test_tcp_util.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/wait_report.hpp"

using namespace ringlab;
using namespace ringlab::store;
using namespace ringlab::tcp;
using namespace ringlab::tcp::testing;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> waiting_lines(LogCapture& log) {
  std::vector<std::string> lines;
  for (const auto& line : log.lines())
    if (line.find("waiting for") != std::string::npos) lines.push_back(line);
  return lines;
}

// The elapsed figure of "... (E ms of T ms)".
long long elapsed_ms(const std::string& line) {
  const auto open = line.rfind('(');
  return std::stoll(line.substr(open + 1));
}

// Starts connect() for each of `ranks` (of a world of `world`) on its own
// thread, rank r after delays[r]; returns each rank's error ("" if it
// connected).
std::vector<std::string> rendezvous(int world, const std::vector<int>& ranks,
                                    const std::vector<Duration>& delays, Duration timeout,
                                    Duration report_interval) {
  const int port = free_port();
  std::vector<std::string> errors(ranks.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    threads.emplace_back([&, i] {
      std::this_thread::sleep_for(delays[i]);
      WorldSpec r = local_rendezvous(world, ranks[i], port, timeout);
      r.report_interval = report_interval;
      try {
        connect(r);
      } catch (const std::exception& error) {
        errors[i] = error.what();
      }
    });
  for (auto& thread : threads) thread.join();
  return errors;
}

}  // namespace

TEST_SUITE("tcp_rendezvous") {
  TEST_CASE("ranks are named compactly: single ranks, runs, and lists") {
    CHECK(list_ranks({2}) == "rank 2");
    CHECK(list_ranks({2, 3}) == "ranks 2-3");
    CHECK(list_ranks({1, 2, 3}) == "ranks 1-3");
    CHECK(list_ranks({1, 3}) == "ranks 1 and 3");
    CHECK(list_ranks({1, 4, 5, 6, 9}) == "ranks 1, 4-6 and 9");
  }

  TEST_CASE("a wait report: the line, at most one per interval, none when nobody is missing") {
    LogCapture log;
    const auto start = Clock::now() - 10s;
    WaitReport report(0, start, 30s, 5s);
    CHECK(report.next_due() == start + 5s);
    report.report_if_due({2, 3});
    report.report_if_due({2, 3});  // the next line is due at 15 s
    CHECK(waiting_lines(log) ==
          std::vector<std::string>{"rank 0: waiting for ranks 2-3 (10 s of 30 s)"});
    CHECK(report.next_due() == start + 15s);

    WaitReport everyone_here(0, Clock::now() - 10s, 30s, 5s);
    everyone_here.report_if_due({});
    CHECK(waiting_lines(log).size() == 1);

    WaitReport never(0, Clock::now() - 10s, 30s, Duration::zero());
    never.report_if_due({1});
    CHECK(never.next_due() == Clock::time_point::max());
    CHECK(waiting_lines(log).size() == 1);
  }

  TEST_CASE("while ranks never come, rank 0 (and only rank 0) names them once per interval") {
    LogCapture log;
    // World of 4; only ranks 0 and 1 start (one node of two).
    const auto errors = rendezvous(4, {0, 1}, {0ms, 0ms}, 1500ms, 200ms);
    for (const auto& error : errors)
      CHECK(error.find("ranks 2-3 did not show up") != std::string::npos);
    const auto lines = waiting_lines(log);
    INFO("lines: " << lines.size());
    CHECK(lines.size() >= 3);
    CHECK(lines.size() <= 1500 / 200);
    // Line k is due 200 k ms in, so each falls in a later 200 ms slot.
    long long previous_slot = 0;
    for (const auto& line : lines) {
      INFO(line);
      CHECK(line.find("rank 0: waiting for ranks ") == 0);
      CHECK(line.find(" ms of 1500 ms)") != std::string::npos);
      const long long slot = elapsed_ms(line) / 200;
      CHECK(slot > previous_slot);
      previous_slot = slot;
    }
    CHECK(lines.back().find("rank 0: waiting for ranks 2-3 (") == 0);
  }

  TEST_CASE("the ranks named shrink as they arrive") {
    LogCapture log;
    // Rank 2 comes 700 ms late; rank 3 never.
    const auto errors = rendezvous(4, {0, 1, 2}, {0ms, 0ms, 700ms}, 1500ms, 200ms);
    for (const auto& error : errors)
      CHECK(error.find("rank 3 did not show up") != std::string::npos);
    const auto lines = waiting_lines(log);
    std::ostringstream all;
    for (const auto& line : lines) all << line << "\n";
    INFO(all.str());
    std::size_t first_without_2 = lines.size(), last_with_2 = 0;
    bool named_2_and_3 = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find("waiting for ranks 2-3 (") != std::string::npos) {
        named_2_and_3 = true;
        last_with_2 = i;
      }
      if (lines[i].find("waiting for rank 3 (") != std::string::npos &&
          first_without_2 == lines.size())
        first_without_2 = i;
    }
    CHECK(named_2_and_3);
    REQUIRE(first_without_2 < lines.size());
    CHECK(last_with_2 < first_without_2);
  }

  TEST_CASE("nothing is said when every rank arrives at once") {
    LogCapture log;
    const auto errors = rendezvous(4, {0, 1, 2, 3}, {0ms, 0ms, 0ms, 0ms}, 10s, 2s);
    CHECK(first_error(errors) == "");
    CHECK(waiting_lines(log).empty());
  }

  TEST_CASE("at the end of the rendezvous, rank 0 names the ranks that have not finished") {
    // Rank 1 is played by hand (the store keys and the handshake of
    // rendezvous.cpp and mesh.cpp): it joins and connects to rank 0, then
    // takes 700 ms before it says it is done.
    LogCapture log;
    const int port = free_port();
    const auto start = Clock::now();
    std::string rank0_error = "not run";
    std::thread rank0([&] {
      WorldSpec r = local_rendezvous(2, 0, port, 5s);
      r.report_interval = 200ms;
      try {
        connect(r);
        rank0_error.clear();
      } catch (const std::exception& error) {
        rank0_error = error.what();
      }
    });
    {
      StoreClient store("127.0.0.1", port, 5s);
      std::uint64_t job = 0;
      std::istringstream(store.get("ringlab/tcp/job")) >> job;
      CHECK(store.add("ringlab/tcp/claim/1", 1) == 1);
      const std::string address = store.get("ringlab/tcp/addr/0");
      boost::asio::io_context io;
      boost::asio::ip::tcp::socket socket(io);
      socket.connect(boost::asio::ip::tcp::endpoint(
          boost::asio::ip::make_address("127.0.0.1"),
          static_cast<unsigned short>(std::stoi(address.substr(address.rfind(':') + 1)))));
      const auto header = encode_frame_header({FrameKind::Hello, 1, 0, kHelloBytes});
      Hello hello{2, 0, job, fresh_nonce()};
      boost::asio::write(socket, boost::asio::buffer(header));
      boost::asio::write(socket, boost::asio::buffer(encode_hello(hello)));
      std::array<std::byte, kFrameHeaderBytes + kHelloBytes> ack{};
      boost::asio::read(socket, boost::asio::buffer(ack));
      // The second hello, with rank 1's proof of the (empty) job token.
      const Hello answer = decode_hello(std::span(ack).last<kHelloBytes>());
      std::array<std::byte, 20> fields{};
      for (int i = 0; i < 8; ++i) fields[i] = static_cast<std::byte>((job >> (8 * i)) & 0xFF);
      fields[8] = std::byte{2};  // world size; connecting rank 1, accepting rank 0
      fields[12] = std::byte{1};
      hello.proof = prove("", kConnectingRankProof, {hello.nonce, answer.nonce, fields});
      boost::asio::write(socket, boost::asio::buffer(header));
      boost::asio::write(socket, boost::asio::buffer(encode_hello(hello)));
      std::this_thread::sleep_for(700ms);
      store.set("ringlab/tcp/done/1", "1");
      // Step 6: rank 1's answer to "more ranks than processors?" (no).
      const auto no = encode_frame_header({FrameKind::Data, 1, kSetupTag, 1});
      boost::asio::write(socket, boost::asio::buffer(no));
      boost::asio::write(socket, boost::asio::buffer(std::array<std::byte, 1>{}));
      rank0.join();
    }
    const auto took = Clock::now() - start;
    CHECK(rank0_error == "");
    const auto lines = waiting_lines(log);
    CHECK(static_cast<long long>(lines.size()) <= took / 200ms);
    int at_the_end = 0;
    for (const auto& line : lines) {
      INFO(line);
      CHECK(line.find("rank 0: waiting for rank 1") == 0);
      at_the_end +=
          line.find("rank 0: waiting for rank 1 to finish connecting to the others (") == 0;
    }
    CHECK(at_the_end >= 2);
  }

  TEST_CASE("the ranks agree whether a host runs more ranks than it has processors") {
    // Every rank of these worlds runs on this host, so each counts all of
    // them; one rank told of fewer processors than that makes every rank's
    // transport prefer fewer messages.
    struct World {
      int ranks;
      std::vector<int> processors;  // per rank
      bool crowded;
    };
    for (const World& world :
         {World{4, {4, 4, 4, 4}, false}, World{4, {4, 4, 4, 3}, true}, World{4, {3, 8, 8, 8}, true},
          World{2, {2, 2}, false}, World{2, {1, 2}, true}, World{1, {1}, false}}) {
      std::ostringstream told;
      for (const int p : world.processors) told << ' ' << p;
      INFO(world.ranks << " ranks, told of these processors:" << told.str());
      std::vector<int> said(static_cast<std::size_t>(world.ranks), -1);
      const auto errors = run_tcp(
          world.ranks,
          [&](TcpTransport& t) {
            said[static_cast<std::size_t>(t.rank())] = t.prefers_fewer_messages() ? 1 : 0;
          },
          10s,
          [&](WorldSpec& r) {
            r.processors = world.processors[static_cast<std::size_t>(r.rank)];
          });
      CHECK(first_error(errors) == "");
      for (const int answer : said) CHECK(answer == (world.crowded ? 1 : 0));
    }
  }

  TEST_CASE("rank 0's store follows MASTER_ADDR within loopback (Debian names the machine 127.0.1.1)") {
    const auto errors = run_tcp(
        2, [](TcpTransport& t) { CHECK(t.size() == 2); }, 10s,
        [](WorldSpec& r) { r.master_addr = "127.0.1.1"; });
    CHECK(first_error(errors) == "");
  }

  TEST_CASE("rank 0 listening on loopback refuses a MASTER_ADDR off loopback at once, naming it") {
    // 192.0.2.1: TEST-NET-1, never a host's own address. Rank 1 times out
    // reaching it and blames rank 0.
    const auto start = Clock::now();
    const auto errors = run_tcp(
        2, [](TcpTransport&) {}, 2s, [](WorldSpec& r) { r.master_addr = "192.0.2.1"; });
    REQUIRE(errors.size() == 2);
    CHECK(errors[0].find("MASTER_ADDR=192.0.2.1 is 192.0.2.1, off loopback") != std::string::npos);
    CHECK(errors[0].find("export MASTER_ADDR=127.0.0.1") != std::string::npos);
    CHECK(errors[1].find("rank 0") != std::string::npos);
    CHECK(Clock::now() - start < 10s);
  }

}  // TEST_SUITE
