// What is particular to the TCP transport, between ranks that are threads of
// this process, each connected over loopback as separate processes would be:
// large messages in both directions, messages that arrive before their
// receive (small ones queued, large ones parked in the socket until their
// receive comes), test() driving the sockets, dropped requests, two threads
// of one rank, and the store being reachable from the transport. The
// Transport contract itself (matching, ordering, zero-length messages, size
// mismatches, timeouts, failed ranks, bad peers) is checked by the
// conformance suite (test_transport_conformance.cpp, program
// test_transport_tcp).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "test_tcp_util.hpp"

using namespace ringlab;
using namespace ringlab::store;
using namespace ringlab::tcp;
using namespace ringlab::tcp::testing;
using namespace std::chrono_literals;

namespace {
ConstBytes as_bytes(const std::vector<int>& v) { return std::as_bytes(std::span(v)); }
MutBytes as_bytes(std::vector<int>& v) { return std::as_writable_bytes(std::span(v)); }

// n ints whose values depend on (seed, index), so a misplaced byte shows.
std::vector<int> pattern(std::size_t n, int seed) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i * 2654435761u) ^ (seed * 7919);
  return v;
}
}  // namespace

TEST_SUITE("tcp_transport") {

TEST_CASE("sendrecv rings of large messages: both directions at once, straight into place") {
  for (int world : {2, 3, 4}) {
    INFO("world " << world);
    const std::size_t n = std::size_t{3} << 20;  // 12 MiB, more than the socket buffers
    const auto errors = run_tcp(world, [n](TcpTransport& t) {
      const int right = (t.rank() + 1) % t.size(), left = (t.rank() - 1 + t.size()) % t.size();
      const std::vector<int> mine = pattern(n, t.rank());
      std::vector<int> got(n, -1);
      for (Tag step = 0; step < 3; ++step)
        t.sendrecv(right, step, as_bytes(mine), left, step, as_bytes(got));
      CHECK(got == pattern(n, left));
    });
    CHECK(first_error(errors) == "");
  }
}

TEST_CASE("both ranks send a large message first, then receive: no deadlock") {
  // Each blocking send needs the other side to read while it waits.
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    const int peer = 1 - t.rank();
    const auto mine = pattern(4 << 20, t.rank());  // 16 MiB, more than the socket buffers
    std::vector<int> got(mine.size());
    t.send(peer, 1, as_bytes(mine));
    t.recv(peer, 1, as_bytes(got));
    CHECK(got == pattern(4 << 20, peer));
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("a message that arrives before its receive, and one whose receive comes mid-way") {
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    const auto small = pattern(10, 1), large = pattern(8 << 20, 2);  // 40 B, 32 MiB
    if (t.rank() == 0) {
      t.send(1, 1, as_bytes(small));
      auto request = t.isend(1, 2, as_bytes(large));
      request->wait(5s);
      t.send(1, 3, as_bytes(std::vector<int>{42}));
    } else {
      // Tag 3 first: tags 1 and 2 must be queued meanwhile.
      std::vector<int> last(1);
      t.recv(0, 3, as_bytes(last));
      CHECK(last[0] == 42);
      std::vector<int> got_small(small.size()), got_large(large.size());
      t.recv(0, 2, as_bytes(got_large));
      t.recv(0, 1, as_bytes(got_small));
      CHECK(got_small == small);
      CHECK(got_large == large);
    }
  });
  CHECK(first_error(errors) == "");
  // A large message whose receive is posted while it is still arriving.
  const auto takeover = run_tcp(2, [](TcpTransport& t) {
    const auto large = pattern(16 << 20, 3);  // 64 MiB
    if (t.rank() == 0) {
      t.send(1, 7, as_bytes(large));
    } else {
      // Drive the socket briefly without a matching receive, so part of the
      // message is queued when its receive is posted.
      std::vector<int> nothing(1);
      auto probe = t.irecv(0, 99, as_bytes(nothing));
      CHECK_THROWS_AS(probe->wait(20ms), TimeoutError);
      std::vector<int> got(large.size());
      t.recv(0, 7, as_bytes(got));
      CHECK(got == large);
    }
  });
  CHECK(first_error(takeover) == "");
}

TEST_CASE("large messages whose receives come late: in place, in a ring of blocking sends, "
          "and of the wrong size") {
  // A receive posted well after its large message arrived (the message waits
  // in the socket, parked, then lands in the receive's buffer).
  // Also one of 40 KiB, which a single read brings in whole with its header.
  const auto late = run_tcp(2, [](TcpTransport& t) {
    const auto large = pattern(1 << 20, 4);  // 4 MiB
    const auto medium = pattern(10 << 10, 6);  // 40 KiB
    if (t.rank() == 0) {
      t.send(1, 1, as_bytes(large));
      t.send(1, 2, as_bytes(std::vector<int>{7}));
      t.send(1, 3, as_bytes(medium));
      std::vector<int> ack(1);  // nothing else comes from rank 0 meanwhile
      t.recv(1, 4, as_bytes(ack));
    } else {
      std::this_thread::sleep_for(100ms);
      std::vector<int> got(large.size()), small(1), got_medium(medium.size());
      t.recv(0, 1, as_bytes(got));
      t.recv(0, 2, as_bytes(small));
      std::this_thread::sleep_for(50ms);
      t.recv(0, 3, as_bytes(got_medium));
      CHECK(got == large);
      CHECK(small[0] == 7);
      CHECK(got_medium == medium);
      t.send(0, 4, as_bytes(std::vector<int>{1}));
    }
  });
  CHECK(first_error(late) == "");
  // Everyone sends 16 MiB to the right before receiving from the left: each
  // send needs its receiver to read before the receive is posted.
  const auto ring = run_tcp(3, [](TcpTransport& t) {
    const int right = (t.rank() + 1) % 3, left = (t.rank() + 2) % 3;
    const auto mine = pattern(4 << 20, t.rank());
    std::vector<int> got(mine.size());
    t.send(right, 1, as_bytes(mine));
    t.recv(left, 1, as_bytes(got));
    CHECK(got == pattern(4 << 20, left));
  });
  CHECK(first_error(ring) == "");
  // A late receive of the wrong size fails, naming both ranks; the next
  // message on the connection still arrives.
  const auto mismatch = run_tcp(2, [](TcpTransport& t) {
    const auto large = pattern(1 << 20, 5);
    if (t.rank() == 0) {
      t.send(1, 1, as_bytes(large));
      t.send(1, 2, as_bytes(std::vector<int>{9}));
    } else {
      std::this_thread::sleep_for(100ms);
      std::vector<int> wrong(large.size() - 1), small(1);
      CHECK_THROWS_WITH_AS(t.recv(0, 1, as_bytes(wrong)),
                           "rank 1 expected 4194300 bytes from rank 0 (tag 1) but the message "
                           "has 4194304 bytes: the ranks passed tensors of different sizes or "
                           "dtypes",
                           CommError);
      t.recv(0, 2, as_bytes(small));
      CHECK(small[0] == 9);
    }
  });
  CHECK(first_error(mismatch) == "");
}

namespace {
// What a CommError from fn says ("" if fn returned).
std::string comm_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const CommError& e) {
    return e.what();
  }
  return "";
}
// Rank 0's tensors are float32, rank 1's int32: 4 bytes per element both.
DType dtype_of(int rank) { return rank == 0 ? DType::Float32 : DType::Int32; }
// The start and end of what rank `me` is told, written out for the two ranks.
void check_told(const std::string& error, int me) {
  INFO("rank " << me << " was told: " << error);
  const std::string start = me == 0 ? "rank 0 expected float32 elements from rank 1 ("
                                    : "rank 1 expected int32 elements from rank 0 (";
  const std::string holds = me == 0 ? ") but the message holds int32: the ranks passed tensors "
                                      "of different dtypes"
                                    : ") but the message holds float32: the ranks passed tensors "
                                      "of different dtypes";
  CHECK(error.find(start) == 0);
  CHECK(error.find(holds) != std::string::npos);
}
}  // namespace

TEST_CASE("two ranks that disagree on the dtype (of one size) are both told, naming both") {
  // Each rank sends its own tensor and receives the other's as its own dtype,
  // on every path a message takes to its receive: posted first, queued, parked
  // in the socket (4 MiB), from any source. Afterwards the connection still
  // carries a message of the right dtype; a receive that names no dtype takes any.
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    const int me = t.rank(), other = 1 - me;
    const DType mine = dtype_of(me);
    std::vector<int> small(4, 7), got(4), ready(1);
    auto handshake = [&](Tag tag) {  // the other's earlier frames are in by its end
      t.send(other, tag, as_bytes(ready));
      t.recv(other, tag, as_bytes(ready));
    };
    {  // posted first
      auto receive = t.irecv_typed(other, 1, as_bytes(got), mine);
      handshake(10);
      t.isend_typed(other, 1, as_bytes(small), mine)->wait(5s);
      check_told(comm_error_of([&] { receive->wait(5s); }), me);
    }
    {  // queued before its receive
      t.isend_typed(other, 2, as_bytes(small), mine)->wait(5s);
      handshake(11);
      check_told(comm_error_of([&] { t.irecv_typed(other, 2, as_bytes(got), mine)->wait(5s); }),
                 me);
    }
    {  // parked in the socket
      const auto large = pattern(1 << 20, me);
      std::vector<int> got_large(large.size());
      auto send = t.isend_typed(other, 3, as_bytes(large), mine);
      std::this_thread::sleep_for(100ms);
      check_told(
          comm_error_of([&] { t.irecv_typed(other, 3, as_bytes(got_large), mine)->wait(5s); }), me);
      send->wait(5s);
    }
    {  // from any source
      t.isend_typed(other, 4, as_bytes(small), mine)->wait(5s);
      handshake(12);
      check_told(
          comm_error_of([&] { t.irecv_typed(kAnySource, 4, as_bytes(got), mine)->wait(5s); }), me);
    }
    const std::vector<int> after{me, 1, 2, 3};
    auto send = t.isend_typed(other, 5, as_bytes(after), DType::Int32);
    t.irecv_typed(other, 5, as_bytes(got), DType::Int32)->wait(5s);
    CHECK(got == std::vector<int>{other, 1, 2, 3});
    send->wait(5s);
    auto untyped = t.isend_typed(other, 6, as_bytes(after), mine);
    t.recv(other, 6, as_bytes(got));  // bytes: any dtype
    CHECK(got == std::vector<int>{other, 1, 2, 3});
    untyped->wait(5s);
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("ProcessGroup's send and recv over TCP: a tensor of another dtype is refused by name") {
  const auto errors = run_tcp_groups(2, [](ProcessGroup& pg) {
    const int me = pg.rank(), other = 1 - me;
    Tensor mine(dtype_of(me), {4});
    Tensor theirs(dtype_of(me), {4});  // what this rank thinks the other sends
    Work send = pg.isend(mine, other, 3);
    check_told(comm_error_of([&] { pg.recv(theirs, other, 3); }), me);
    send.wait(5s);
    // Then the same dtype on both sides: it arrives.
    Tensor agreed = Tensor::of({10.0 + me, 11.0, 12.0}, DType::Int16);
    Tensor in(DType::Int16, {3});
    Work again = pg.isend(agreed, other, 4);
    pg.recv(in, other, 4);
    again.wait(5s);
    CHECK(in.item_as_double(0) == 10.0 + other);
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("a receive for a message that waits behind a parked one of another tag") {
  // Rank 1 sends 40 KiB (tag 1, parked at rank 0, which has no receive for
  // it) and then m2 (tag 2); rank 0 reads them while it receives from rank 2,
  // then receives tag 2 before tag 1. m2 small (staged behind the parked frame),
  // m2 large (parks in turn), and m2 followed by rank 1's goodbye (rank 1 is
  // finished; m2 must still be delivered, not blamed on rank 1).
  struct Variant {
    const char* name;
    std::size_t m2_bytes;
    bool sender_exits;
  };
  for (const Variant& v : {Variant{"small m2", 100, false}, Variant{"large m2", 36 << 10, false},
                           Variant{"small m2, then goodbye", 100, true}}) {
    INFO(v.name);
    const auto errors = run_tcp(
        3,
        [&](TcpTransport& t) {
          const auto m1 = pattern(10 << 10, 1), m2 = pattern(v.m2_bytes / sizeof(int), 2);
          if (t.rank() == 1) {
            t.send(0, 1, as_bytes(m1));
            t.send(0, 2, as_bytes(m2));
            if (v.sender_exits) return;
            std::vector<int> done(1);
            t.recv(0, 9, as_bytes(done));
          } else if (t.rank() == 2) {
            t.send(0, 0, as_bytes(std::vector<int>{5}));
          } else {
            // Everything is in rank 0's sockets before it reads: one read
            // brings m1's header and (small) m2 into the staging buffer.
            std::this_thread::sleep_for(100ms);
            std::vector<int> from_two(1), got1(m1.size()), got2(m2.size());
            t.recv(2, 0, as_bytes(from_two));
            t.irecv(1, 2, as_bytes(got2))->wait(2s);
            t.irecv(1, 1, as_bytes(got1))->wait(2s);
            CHECK(got1 == m1);
            CHECK(got2 == m2);
            if (!v.sender_exits) t.send(1, 9, as_bytes(std::vector<int>{1}));
          }
        },
        5s);
    CHECK(first_error(errors) == "");
  }
}

TEST_CASE("large sends to each other, polled with test() before the receives are posted") {
  // Neither send can finish until the other side reads; the parked payloads
  // must move to the queue while the ranks only call test().
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    const int peer = 1 - t.rank();
    const auto mine = pattern(4 << 20, t.rank());  // 16 MiB
    std::vector<int> got(mine.size());
    auto send = t.isend(peer, 5, as_bytes(mine));
    const auto give_up = std::chrono::steady_clock::now() + 2s;
    while (!send->test()) {
      if (std::chrono::steady_clock::now() > give_up)
        throw std::runtime_error("rank " + std::to_string(t.rank()) +
                                 ": send not done after 2 s of test()");
      std::this_thread::sleep_for(1ms);  // other work between polls
    }
    t.recv(peer, 5, as_bytes(got));
    CHECK(got == pattern(4 << 20, peer));
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("a large receive and send posted on both sides complete by polling test() alone") {
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    const int peer = 1 - t.rank();
    const auto big = pattern(8 << 20, t.rank());  // 32 MiB
    std::vector<int> got(big.size());
    auto recv = t.irecv(peer, 5, as_bytes(got));
    auto send = t.isend(peer, 5, as_bytes(big));
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!(send->test() && recv->test()) && std::chrono::steady_clock::now() < deadline) {
    }
    CHECK(send->test());
    CHECK(recv->test());
    recv->wait(1s);
    CHECK(got == pattern(8 << 20, peer));
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("a dropped send request still delivers what was in the buffer then") {
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    const auto expected = pattern(8 << 20, 9);  // 32 MiB: the kernel cannot take it at once
    if (t.rank() == 0) {
      auto buffer = expected;
      t.isend(1, 1, as_bytes(buffer)).reset();
      std::fill(buffer.begin(), buffer.end(), -1);  // the caller reuses its buffer
      std::vector<int> ack(1);
      t.recv(1, 2, as_bytes(ack));
    } else {
      std::vector<int> got(expected.size());
      t.recv(0, 1, as_bytes(got));
      CHECK(got == expected);
      t.send(0, 2, as_bytes(std::vector<int>{1}));
    }
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("two threads of each rank use the transport at once (one drives, the other follows)") {
  const auto errors = run_tcp(3, [](TcpTransport& t) {
    auto ring = [&t](Tag tag_base, std::size_t n) {
      const int right = (t.rank() + 1) % t.size(), left = (t.rank() + t.size() - 1) % t.size();
      const auto mine = pattern(n, t.rank() + static_cast<int>(tag_base));
      std::vector<int> got(n);
      for (Tag step = 0; step < 50; ++step)
        t.sendrecv(right, tag_base + step, as_bytes(mine), left, tag_base + step, as_bytes(got));
      CHECK(got == pattern(n, left + static_cast<int>(tag_base)));
    };
    std::thread other([&] { ring(1000, 1 << 16); });  // 256 KiB messages
    ring(0, 3);
    other.join();
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("the store is reachable from the transport (as the NCCL backend uses it)") {
  const auto errors = run_tcp(3, [](TcpTransport& t) {
    auto& store = t.store();  // a store::Store
    if (t.rank() == 0) store.set("nccl/unique_id", std::string(128, '\x07'));
    CHECK(store.get("nccl/unique_id", 5s) == std::string(128, '\x07'));
    CHECK(t.shared_store().get() == &store);
    CHECK(t.job_id() != 0);
    // Every rank agreed on the job id.
    store.set("job/" + std::to_string(t.rank()), std::to_string(t.job_id()));
    for (int r = 0; r < 3; ++r)
      CHECK(store.get("job/" + std::to_string(r), 5s) == std::to_string(t.job_id()));
    // Rank 0 hosts the store: it stays until the others are done with it.
    store.add("left", 1);
    if (t.rank() == 0) {
      store.wait({"left"}, 5s);
      while (store.add("left", 0) < 3) std::this_thread::sleep_for(1ms);
    }
  });
  CHECK(first_error(errors) == "");
}

}  // TEST_SUITE
