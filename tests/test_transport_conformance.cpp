// The transport conformance suite: the contract of transport/transport.hpp,
// checked through the Transport interface alone, for every binding of the
// test program (transport_conformance.hpp). Matching by source and tag, FIFO
// per (source, tag), messages that arrive before their receive and receives
// posted before their message, zero-length messages, size mismatches,
// timeouts, failed ranks, rings of sendrecv, bad peers and test().
//
// Every message carries values that depend on who sent it, with which tag
// and in which order, so a message delivered to the wrong receive shows.
// Receive buffers start at -1, so one that was not written shows too.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "conformance_checks.hpp"

using namespace ringlab;
using namespace ringlab::conformance;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace ringlab::conformance {

RankBody record_outcome(std::vector<RankOutcome>& outcomes, const RankBody& body) {
  return [&outcomes, body](Transport& t) {
    RankOutcome& outcome = outcomes.at(static_cast<std::size_t>(t.rank()));
    try {
      body(t);
    } catch (const PeerError& e) {
      outcome = {Kind::PeerFailure, e.what(), e.peer()};
      throw;
    } catch (const TimeoutError& e) {
      outcome = {Kind::Timeout, e.what(), -1};
      throw;
    } catch (const CommError& e) {
      outcome = {Kind::CommFailure, e.what(), -1};
      throw;
    } catch (const std::exception& e) {
      outcome = {Kind::OtherFailure, e.what(), -1};
      throw;
    }
  };
}

Buffer Memory::holding(const std::vector<int>& values) {
  return holding_bytes(std::as_bytes(std::span(values)));
}

Buffer Memory::holding_bytes(ConstBytes bytes) {
  Buffer buffer = t_.allocate(bytes.size());
  if (binding_.to_transport)
    binding_.to_transport(t_, buffer.span(), bytes);
  else if (!bytes.empty())
    std::memcpy(buffer.span().data(), bytes.data(), bytes.size());
  return buffer;
}

std::vector<int> Memory::read(const Buffer& buffer) {
  const std::vector<std::byte> bytes = read_bytes(buffer);
  std::vector<int> values(bytes.size() / sizeof(int));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(int));
  return values;
}

std::vector<std::byte> Memory::read_bytes(const Buffer& buffer) {
  std::vector<std::byte> bytes(buffer.size);
  if (binding_.to_host)
    binding_.to_host(t_, bytes, buffer.span());
  else if (!bytes.empty())
    std::memcpy(bytes.data(), buffer.span().data(), bytes.size());
  return bytes;
}

void Memory::send(int dst, Tag tag, const std::vector<int>& values) {
  const Buffer buffer = holding(values);
  t_.send(dst, tag, buffer.span());
}

std::vector<int> Memory::recv(int src, Tag tag, std::size_t n) {
  const Buffer buffer = blank(n);
  t_.recv(src, tag, buffer.span());
  return read(buffer);
}

}  // namespace ringlab::conformance

TEST_CASE("a message goes to the receive for its source and tag; FIFO per (source, tag)") {
  for_each_binding(3, [](const Binding& b) {
    const auto outcomes = b.run(3, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 0) {
        memory.send(2, 5, message(0, 5, 0));
        memory.send(2, 5, message(0, 5, 1));
        memory.send(2, 9, message(0, 9, 0));
      } else if (t.rank() == 1) {
        memory.send(2, 5, message(1, 5, 0));
      } else {
        // Rank 1's message first although rank 0's were sent earlier.
        CHECK(memory.recv(1, 5, 3) == message(1, 5, 0));
        if (b.matches_tags) {
          // Tag 9 first although it was sent last.
          CHECK(memory.recv(0, 9, 3) == message(0, 9, 0));
          CHECK(memory.recv(0, 5, 3) == message(0, 5, 0));
          CHECK(memory.recv(0, 5, 3) == message(0, 5, 1));
        } else {
          MESSAGE(b.name << " matches in posting order: tag 9 is not received out of order");
          CHECK(memory.recv(0, 5, 3) == message(0, 5, 0));
          CHECK(memory.recv(0, 5, 3) == message(0, 5, 1));
          CHECK(memory.recv(0, 9, 3) == message(0, 9, 0));
        }
      }
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE("receives posted before their messages are filled as the messages come") {
  for_each_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 0) {
        memory.recv(1, 100, 1);  // rank 1 has posted its receives
        for (Tag tag : {1, 2, 3}) memory.send(1, tag, message(0, tag, 0));
        memory.send(1, 1, message(0, 1, 1));
        return;
      }
      // Posted in another order than the messages are sent (where tags
      // match), and waited on in yet another.
      const std::vector<Tag> post_order =
          b.matches_tags ? std::vector<Tag>{3, 1, 2, 1} : std::vector<Tag>{1, 2, 3, 1};
      std::vector<Buffer> buffers;
      std::vector<std::unique_ptr<Request>> requests;
      for (Tag tag : post_order) {
        buffers.push_back(memory.blank(3));
        requests.push_back(t.irecv(0, tag, buffers.back().span()));
      }
      memory.send(0, 100, {1});
      for (std::size_t i : {std::size_t{3}, std::size_t{0}, std::size_t{2}, std::size_t{1}})
        requests[i]->wait(t.timeout());
      int nth_of_tag_1 = 0;
      for (std::size_t i = 0; i < post_order.size(); ++i) {
        const Tag tag = post_order[i];
        CHECK(memory.read(buffers[i]) == message(0, tag, tag == 1 ? nth_of_tag_1++ : 0));
      }
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE("messages that arrive before their receives wait for them, in any order of receiving") {
  for_each_binding(2, [](const Binding& b) {
    if (!b.buffers_sends || !b.matches_tags) {
      MESSAGE(b.name << ": skipped, its sends wait for their receives");
      return;
    }
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      const std::size_t large = std::size_t{1} << 18;  // 1 MiB
      if (t.rank() == 0) {
        memory.send(1, 1, message(0, 1, 0));
        memory.send(1, 2, message(0, 2, 0, large));
        memory.send(1, 3, message(0, 3, 0));
        memory.send(1, 1, message(0, 1, 1));
        memory.send(1, 4, {});
        memory.send(1, 99, message(0, 99, 0));
        memory.recv(1, 100, 0);  // stay until rank 1 is done
        return;
      }
      // Tag 99 was sent last: once it is here, so is everything before it.
      CHECK(memory.recv(0, 99, 3) == message(0, 99, 0));
      CHECK(memory.recv(0, 3, 3) == message(0, 3, 0));
      CHECK(memory.recv(0, 4, 0).empty());
      CHECK(memory.recv(0, 1, 3) == message(0, 1, 0));
      CHECK(memory.recv(0, 2, large) == message(0, 2, 0, large));
      CHECK(memory.recv(0, 1, 3) == message(0, 1, 1));
      memory.send(0, 100, {});
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE("zero-length messages are messages: matched, ordered and waited for like others") {
  for_each_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      const int peer = 1 - t.rank();
      if (t.rank() == 0) {
        // Where sends do not wait for their receives, the receive of tag 5 is
        // posted before its message can come (rank 1 sends it last).
        const Buffer nothing = memory.blank(0);
        std::unique_ptr<Request> receive;
        if (b.buffers_sends) receive = t.irecv(peer, 5, nothing.span());
        memory.send(peer, 4, message(0, 4, 0, 2));
        memory.send(peer, 4, {});
        memory.send(peer, 4, message(0, 4, 2, 1));
        if (!receive) receive = t.irecv(peer, 5, nothing.span());
        receive->wait(t.timeout());
        CHECK(receive->test());
      } else {
        CHECK(memory.recv(peer, 4, 2) == message(0, 4, 0, 2));
        CHECK(memory.recv(peer, 4, 0).empty());
        CHECK(memory.recv(peer, 4, 1) == message(0, 4, 2, 1));
        memory.send(peer, 5, {});
      }
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE(
    "a message of the wrong size fails its receive, naming both ranks and sizes; the next "
    "message still arrives") {
  for_each_binding(2, [](const Binding& b) {
    if (!b.detects_size_mismatch) {
      MESSAGE(b.name << ": skipped, it cannot see a size mismatch");
      return;
    }
    for (bool receive_first : {true, false}) {
      INFO("receive posted before the message: " << receive_first);
      const auto outcomes = b.run(2, 10s, [&b, receive_first](Transport& t) {
        Memory memory(b, t);
        if (t.rank() == 0) {
          if (receive_first) memory.recv(1, 4, 0);  // rank 1's receive is posted
          memory.send(1, 3, message(0, 3, 0, 3));   // 12 bytes for an 8-byte receive
          memory.send(1, 3, message(0, 3, 1, 2));
          memory.send(1, 99, {});
          memory.recv(1, 5, 0);
          return;
        }
        const Buffer two = memory.blank(2);
        std::unique_ptr<Request> request;
        if (receive_first) {
          request = t.irecv(0, 3, two.span());
          memory.send(0, 4, {});
        } else if (b.matches_tags) {
          memory.recv(0, 99, 0);  // sent after tag 3: the message is here
          request = t.irecv(0, 3, two.span());
        } else {
          // Messages meet receives in posting order: rank 0's first message
          // is tag 3's, already on its way when the receive is posted.
          std::this_thread::sleep_for(50ms);
          request = t.irecv(0, 3, two.span());
        }
        CHECK_THROWS_WITH_AS(request->wait(t.timeout()),
                             doctest::Contains("rank 1 expected 8 bytes from rank 0 (tag 3) but the "
                                               "message has 12 bytes: the ranks passed tensors of "
                                               "different sizes or dtypes"),
                             CommError);
        CHECK(memory.recv(0, 3, 2) == message(0, 3, 1, 2));
        if (receive_first || !b.matches_tags) memory.recv(0, 99, 0);
        memory.send(0, 5, {});
      });
      check_all_finished(outcomes);  // the sender saw no error
    }
  });
}

TEST_CASE(
    "a receive whose message never comes times out after timeout(), naming both ranks and "
    "the tag, and is withdrawn") {
  for_each_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 200ms, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 0) {
        if (!b.survives_timeout) {
          // Still there, and not waiting, when rank 1 times out: leaving (or
          // waiting) would be reported as a deadlock at once instead.
          if (b.detects_deadlock) std::this_thread::sleep_for(1s);
          return;
        }
        // Stays (longer than rank 1's timeout) until rank 1 has timed out.
        const Buffer go = memory.blank(0);
        t.irecv(1, 1, go.span())->wait(10s);
        memory.send(1, 6, message(0, 6, 0, 1));
        return;
      }
      const Buffer first = memory.blank(1);
      const auto start = Clock::now();
      CHECK_THROWS_WITH_AS(t.recv(0, 6, first.span()),
                           doctest::Contains("rank 1 timed out after 200 ms waiting to receive "
                                             "from rank 0 (tag 6)"),
                           TimeoutError);
      const auto took = Clock::now() - start;
      if (b.real_time) CHECK(took >= 200ms);
      CHECK(took < 5s);
      if (!b.survives_timeout) return;
      memory.send(0, 1, {});
      const Buffer later = memory.blank(1);
      t.irecv(0, 6, later.span())->wait(10s);
      CHECK(memory.read(later) == message(0, 6, 0, 1));
      CHECK(memory.read(first) == std::vector<int>{-1});  // the withdrawn receive got nothing
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE(
    "when a rank fails, every other rank's wait fails with a PeerError naming it, long "
    "before the timeout") {
  for_each_binding(3, [](const Binding& b) {
    for (bool others_waiting : {false, true}) {
      INFO("the others are already waiting when it fails: " << others_waiting);
      const auto start = Clock::now();
      const auto outcomes = b.run(3, 20s, [&b, others_waiting](Transport& t) {
        Memory memory(b, t);
        if (t.rank() == 2) {
          if (others_waiting) std::this_thread::sleep_for(100ms);
          throw std::runtime_error("rank 2 broke");
        }
        // Rank 1 waits on rank 2; rank 0 waits on rank 1, which is alive.
        memory.recv(t.rank() + 1, 7, 1);
      });
      CHECK(Clock::now() - start < 10s);
      REQUIRE(outcomes.size() == 3);
      CHECK(outcomes[2].kind == Kind::OtherFailure);
      CHECK(outcomes[2].what == "rank 2 broke");
      for (int rank : {0, 1}) {
        const RankOutcome& o = outcomes[static_cast<std::size_t>(rank)];
        INFO("rank " << rank << ": " << std::string(kind_name(o.kind)) << " " << o.what);
        CHECK(o.kind == Kind::PeerFailure);
        CHECK(o.peer == 2);
        CHECK(o.what.find("rank 2") != std::string::npos);
      }
    }
  });
}

TEST_CASE("sendrecv around a ring completes with everyone sending first, at any world size") {
  for (int world : {2, 3, 5}) {
    for_each_binding(world, [world](const Binding& b) {
      for (std::size_t n : {std::size_t{1}, std::size_t{1} << 18}) {  // 4 bytes, 1 MiB
        INFO("world " << world << ", " << n << " ints");
        const auto outcomes = b.run(world, 10s, [&b, n](Transport& t) {
          Memory memory(b, t);
          const int right = (t.rank() + 1) % t.size();
          const int left = (t.rank() + t.size() - 1) % t.size();
          const int steps = n == 1 ? 20 : 2;
          for (int step = 0; step < steps; ++step) {
            const Tag tag = static_cast<Tag>(step);
            const Buffer mine = memory.holding(message(t.rank(), tag, 0, n));
            const Buffer got = memory.blank(n);
            t.sendrecv(right, tag, mine.span(), left, tag, got.span());
            CHECK(memory.read(got) == message(left, tag, 0, n));
          }
        });
        check_all_finished(outcomes);
      }
    });
  }
}

TEST_CASE("test() turns true once a request completes, and wait() then returns at once") {
  for_each_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      auto poll = [](Request& request) {
        const auto give_up = Clock::now() + 5s;
        while (!request.test() && Clock::now() < give_up) std::this_thread::sleep_for(1ms);
        return request.test();
      };
      if (t.rank() == 0) {
        memory.recv(1, 1, 0);  // rank 1's receive is posted
        const Buffer data = memory.holding(message(0, 2, 0));
        auto send = t.isend(1, 2, data.span());
        CHECK(poll(*send));
        send->wait(0ms);
        return;
      }
      const Buffer got = memory.blank(3);
      auto recv = t.irecv(0, 2, got.span());
      if (b.launches_in_order) {
        // Launched with the receive: launched after it, the go would wait for
        // it, and so for rank 0, which sends only once the go has come.
        const Buffer go = memory.blank(0);
        auto go_send = t.isend(0, 1, go.span());
        CHECK_FALSE(recv->test());
        CHECK(poll(*recv));
        go_send->wait(t.timeout());
      } else {
        CHECK_FALSE(recv->test());  // rank 0 sends only after the next line
        memory.send(0, 1, {});
        CHECK(poll(*recv));
      }
      recv->wait(0ms);
      CHECK(memory.read(got) == message(0, 2, 0));
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE(
    "where every rank waits and none can go on, each wait fails at once saying what every "
    "rank waits for") {
  for_each_binding(2, [](const Binding& b) {
    if (!b.detects_deadlock) {
      MESSAGE(b.name << ": skipped, a deadlock there is a timeout (checked above)");
      return;
    }
    // Both send first, and a send moves only once its receive runs.
    auto start = Clock::now();
    auto outcomes = b.run(2, 20s, [&b](Transport& t) {
      Memory memory(b, t);
      memory.send(1 - t.rank(), 1, message(t.rank(), 1, 0));
      memory.recv(1 - t.rank(), 1, 3);
    });
    CHECK(Clock::now() - start < 5s);
    for (const RankOutcome& o : outcomes) {
      INFO(std::string(kind_name(o.kind)) << " " << o.what);
      CHECK(((o.kind == Kind::CommFailure && o.what.find("deadlock") != std::string::npos) ||
             o.kind == Kind::PeerFailure));
    }
    const std::string& report = outcomes[0].kind == Kind::CommFailure ? outcomes[0].what
                                                                      : outcomes[1].what;
    CHECK(report.find("rank 0 waits for its send to rank 1 (tag 1)") != std::string::npos);
    CHECK(report.find("rank 1 waits for its send to rank 0 (tag 1)") != std::string::npos);
    if (!b.launches_in_order) return;
    // Rank 0 launches a receive alone, then a send: the send runs only
    // after the receive, which rank 1 sends only after receiving.
    start = Clock::now();
    outcomes = b.run(2, 20s, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 0) {
        const Buffer early = memory.blank(3);
        auto recv = t.irecv(1, 2, early.span());
        CHECK_FALSE(recv->test());
        memory.send(1, 1, message(0, 1, 0));
        recv->wait(t.timeout());
      } else {
        memory.recv(0, 1, 3);  // throws: the deadlock
        memory.send(0, 2, message(1, 2, 0));
      }
    });
    CHECK(Clock::now() - start < 5s);
    const std::string& order = outcomes[1].what;
    INFO(order);
    CHECK(order.find("deadlock") != std::string::npos);
    CHECK(order.find("rank 1 waits for its receive from rank 0 (tag 1)") != std::string::npos);
    CHECK(order.find("in a later group than one it is still waiting on") != std::string::npos);
  });
}

TEST_CASE("bad peers are refused with std::invalid_argument before anything is sent") {
  for_each_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      const Buffer one = memory.blank(1);
      CHECK_THROWS_WITH_AS(t.isend(t.rank(), 0, one.span()), doctest::Contains("itself"),
                           std::invalid_argument);
      CHECK_THROWS_WITH_AS(t.irecv(2, 0, one.span()), doctest::Contains("valid ranks are 0..1"),
                           std::invalid_argument);
      CHECK_THROWS_AS(t.isend(-1, 0, one.span()), std::invalid_argument);
      // Still in working order afterwards.
      const int peer = 1 - t.rank();
      const Buffer mine = memory.holding(message(t.rank(), 8, 0, 1));
      t.sendrecv(peer, 8, mine.span(), peer, 8, one.span());
      CHECK(memory.read(one) == message(peer, 8, 0, 1));
    });
    check_all_finished(outcomes);
  });
}
