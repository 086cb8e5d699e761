// Part of the transport conformance suite: receives from any source
// (transport.hpp's kAnySource, torch.distributed's recv without src). Where
// the binding receives from any source, such a receive takes the oldest
// message of its tag from whichever rank, in turn with the receives posted
// for one rank, and says who sent it (Request::source()); it fails on a size
// mismatch, times out and is withdrawn, and hears of a failed rank, as a
// receive from one rank does. Where it cannot (NCCL, nccl_rules), irecv
// refuses it, saying so.
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "conformance_checks.hpp"

using namespace ringlab;
using namespace ringlab::conformance;
using namespace std::chrono_literals;

namespace {

// Runs check(binding) for every binding that receives from any source and
// can start `ranks` ranks.
template <typename Check>
void for_each_any_source_binding(int ranks, Check&& check) {
  for_each_binding(ranks, [&](const Binding& b) {
    if (!b.receives_from_any_source) {
      MESSAGE(b.name << ": skipped, it cannot receive from any source (checked below)");
      return;
    }
    check(b);
  });
}

// A receive from any source of n ints with tag; returns the values and
// checks that source() names a rank other than this one.
std::vector<int> recv_any(const Binding& b, Transport& t, Tag tag, int& from, std::size_t n = 3) {
  Memory memory(b, t);
  const Buffer got = memory.blank(n);
  auto request = t.irecv(kAnySource, tag, got.span());
  request->wait(t.timeout());
  from = request->source();
  CHECK(from >= 0);
  CHECK(from < t.size());
  CHECK(from != t.rank());
  return memory.read(got);
}

}  // namespace

TEST_CASE(
    "a receive from any source takes the oldest message of its tag, from whichever rank, and "
    "says who sent it") {
  for_each_any_source_binding(3, [](const Binding& b) {
    const auto outcomes = b.run(3, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      const int me = t.rank();
      if (me == 2) memory.recv(0, 101, 0);  // rank 2 sends after rank 1's messages are here
      if (me != 0) {
        memory.send(0, 5, message(me, 5, 0));
        if (me == 1) memory.send(0, 5, message(me, 5, 1));
        memory.send(0, 7, message(me, 7, 0));
        memory.send(0, 99, {});  // sent last: once it is here, so is everything before it
        memory.recv(0, 100, 0);  // stay until rank 0 is done
        return;
      }
      memory.recv(1, 99, 0);
      memory.send(2, 101, {});
      memory.recv(2, 99, 0);
      // Tag 7 first, although both sent it after tag 5: the tag still matters.
      int from = -1, other = -1;
      const std::vector<int> first = recv_any(b, t, 7, from);
      CHECK(first == message(from, 7, 0));
      const std::vector<int> second = recv_any(b, t, 7, other);
      CHECK(second == message(other, 7, 0));
      CHECK(from + other == 3);  // one from rank 1, one from rank 2
      // Tag 5 in the order the messages came: rank 1's two (in the order
      // sent), then rank 2's.
      for (auto [sender, nth] : {std::pair{1, 0}, std::pair{1, 1}, std::pair{2, 0}}) {
        CHECK(recv_any(b, t, 5, from) == message(sender, 5, nth));
        CHECK(from == sender);
      }
      for (int peer : {1, 2}) memory.send(peer, 100, {});
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE(
    "receives from any source and from one rank, posted before their messages, are filled in "
    "the order they were posted") {
  for_each_any_source_binding(3, [](const Binding& b) {
    const auto outcomes = b.run(3, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 1) return;  // sends nothing: an any-source receive waits for rank 2 alone
      if (t.rank() == 2) {
        memory.recv(0, 100, 0);  // rank 0 has posted its receives
        for (int nth = 0; nth < 3; ++nth) memory.send(0, 3, message(2, 3, nth));
        return;
      }
      std::vector<Buffer> buffers;
      std::vector<std::unique_ptr<Request>> requests;
      for (int src : {kAnySource, 2, kAnySource}) {
        buffers.push_back(memory.blank(3));
        requests.push_back(t.irecv(src, 3, buffers.back().span()));
      }
      memory.send(2, 100, {});
      for (std::size_t i : {std::size_t{2}, std::size_t{0}, std::size_t{1}}) {
        requests[i]->wait(t.timeout());
        CHECK(requests[i]->source() == 2);
      }
      for (std::size_t i = 0; i < buffers.size(); ++i)
        CHECK(memory.read(buffers[i]) == message(2, 3, static_cast<int>(i)));
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE(
    "a large message that waits in its socket reaches a receive from any source; one of another "
    "tag makes way") {
  for_each_any_source_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      const std::size_t large = std::size_t{1} << 18;  // 1 MiB: TCP parks it
      if (t.rank() == 1) {
        memory.send(0, 2, message(1, 2, 0, large));
        memory.send(0, 4, message(1, 4, 0));
        memory.send(0, 6, message(1, 6, 0, large));
        memory.recv(0, 100, 0);
        return;
      }
      int from = -1;
      CHECK(recv_any(b, t, 4, from) == message(1, 4, 0));  // tag 2 is ahead of it
      CHECK(from == 1);
      CHECK(recv_any(b, t, 6, from, large) == message(1, 6, 0, large));
      CHECK(recv_any(b, t, 2, from, large) == message(1, 2, 0, large));
      memory.send(1, 100, {});
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE(
    "a receive from any source of the wrong size fails naming its sender; one that times out "
    "is withdrawn") {
  for_each_any_source_binding(3, [](const Binding& b) {
    const auto outcomes = b.run(3, 300ms, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 1) return;
      if (t.rank() == 2) {
        memory.send(0, 8, message(2, 8, 0, 3));  // 12 bytes for an 8-byte receive
        memory.send(0, 8, message(2, 8, 1, 2));
        // Stays (longer than rank 0's timeout) until rank 0 has timed out.
        const Buffer go = memory.blank(0);
        t.irecv(0, 100, go.span())->wait(10s);
        memory.send(0, 6, message(2, 6, 0, 1));
        return;
      }
      const Buffer two = memory.blank(2);
      auto wrong = t.irecv(kAnySource, 8, two.span());
      CHECK_THROWS_WITH_AS(wrong->wait(10s),
                           doctest::Contains("rank 0 expected 8 bytes from rank 2 (tag 8) but the "
                                             "message has 12 bytes"),
                           CommError);
      int from = -1;
      CHECK(recv_any(b, t, 8, from, 2) == message(2, 8, 1, 2));
      const Buffer first = memory.blank(1);
      CHECK_THROWS_WITH_AS(t.recv(kAnySource, 6, first.span()),
                           doctest::Contains("rank 0 timed out after 300 ms waiting to receive "
                                             "from any rank (tag 6)"),
                           TimeoutError);
      memory.send(2, 100, {});
      const Buffer later = memory.blank(1);
      auto request = t.irecv(kAnySource, 6, later.span());
      request->wait(10s);
      CHECK(request->source() == 2);
      CHECK(memory.read(later) == message(2, 6, 0, 1));
      CHECK(memory.read(first) == std::vector<int>{-1});  // the withdrawn receive got nothing
    });
    check_all_finished(outcomes);
  });
}

TEST_CASE("a receive from any source hears of a failed rank at once, naming it") {
  for_each_any_source_binding(3, [](const Binding& b) {
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = b.run(3, 20s, [&b](Transport& t) {
      Memory memory(b, t);
      if (t.rank() == 2) {
        std::this_thread::sleep_for(100ms);
        throw std::runtime_error("rank 2 broke");
      }
      // Rank 1 waits on rank 2; rank 0 on whichever rank sends first.
      const Buffer got = memory.blank(1);
      t.recv(t.rank() == 1 ? 2 : kAnySource, 7, got.span());
    });
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    for (int rank : {0, 1}) {
      const RankOutcome& o = outcomes[static_cast<std::size_t>(rank)];
      INFO("rank " << rank << ": " << std::string(kind_name(o.kind)) << " " << o.what);
      CHECK(o.kind == Kind::PeerFailure);
      CHECK(o.peer == 2);
    }
  });
}

TEST_CASE("where receives from any source cannot be, irecv refuses them, saying so") {
  for_each_binding(2, [](const Binding& b) {
    const auto outcomes = b.run(2, 10s, [&b](Transport& t) {
      Memory memory(b, t);
      const Buffer one = memory.blank(1);
      CHECK(t.receives_from_any_source() == b.receives_from_any_source);
      if (b.receives_from_any_source) return;
      CHECK_THROWS_WITH_AS(t.irecv(kAnySource, 0, one.span()),
                           doctest::Contains("cannot receive from any source"),
                           std::invalid_argument);
      // Still in working order afterwards.
      const int peer = 1 - t.rank();
      const Buffer mine = memory.holding(message(t.rank(), 8, 0, 1));
      t.sendrecv(peer, 8, mine.span(), peer, 8, one.span());
      CHECK(memory.read(one) == message(peer, 8, 0, 1));
    });
    check_all_finished(outcomes);
  });
}
