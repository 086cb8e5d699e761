// The TCP engine against a peer that is only a socket: what a frame's header
// may make a rank do. A message that arrives before its receive is kept in
// memory only up to kMaxUnexpectedBytes (framing.hpp), so a header claiming
// 16 GiB on a tag nobody receives costs nothing, and a rank forced to keep it
// fails naming the peer; a posted receive of a known size takes any size.
// Each engine here is built on loopback sockets made by the test (no
// rendezvous), with a small limit where whole messages must cross it.
#include <doctest/doctest.h>

#include <time.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test_tcp_util.hpp"
#include "transport/tcp/engine.hpp"
#include "transport/tcp/engine_policy.hpp"
#include "transport/tcp/framing.hpp"
#include "transport/tcp/send_custody.hpp"

using namespace ringlab;
using namespace ringlab::tcp;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

using Clock = std::chrono::steady_clock;

// This process's address space (VmSize), in bytes.
std::size_t address_space() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) << 10;
  return 0;
}

// Connects `far` to `near` (a socket of near_io) over loopback.
void socket_pair(asio::io_context& near_io, asio::ip::tcp::socket& near,
                 asio::ip::tcp::socket& far) {
  asio::ip::tcp::acceptor acceptor(near_io,
                                   asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  far.connect(acceptor.local_endpoint());
  near = acceptor.accept();
}

// The descriptors of sockets, taken out of Asio for an engine (-1: unopened).
std::vector<int> descriptors(std::vector<asio::ip::tcp::socket>& sockets) {
  std::vector<int> fds;
  for (auto& socket : sockets) fds.push_back(socket.is_open() ? socket.release() : -1);
  return fds;
}

// Rank 0 of a world of `world`: an engine whose peers are raw sockets.
struct EngineWithRawPeers {
  explicit EngineWithRawPeers(int world = 2, std::uint64_t max_unexpected = kMaxUnexpectedBytes)
      : peers(static_cast<std::size_t>(world)) {
    auto io = std::make_unique<asio::io_context>();
    std::vector<asio::ip::tcp::socket> sockets;
    for (int q = 0; q < world; ++q) {
      sockets.emplace_back(*io);
      peers[static_cast<std::size_t>(q)] = std::make_unique<asio::ip::tcp::socket>(peer_io);
    }
    for (int q = 1; q < world; ++q)
      socket_pair(*io, sockets[static_cast<std::size_t>(q)], *peers[static_cast<std::size_t>(q)]);
    engine = std::make_shared<Engine>(0, world, descriptors(sockets), max_unexpected);
  }
  // A data frame's header from `peer`, and nothing after it.
  void send_header(int peer, Tag tag, std::uint64_t length) {
    const auto header = encode_frame_header({FrameKind::Data, peer, tag, length});
    asio::write(*peers[static_cast<std::size_t>(peer)], asio::buffer(header));
  }
  asio::io_context peer_io;
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> peers;
  std::shared_ptr<Engine> engine;
};

// Ranks 0 and 1 of a world of 3, both engines, connected to each other; rank
// 2 is only a socket at each (rank 0 drives its sockets by waiting on it).
struct EnginePair {
  explicit EnginePair(std::uint64_t max_unexpected) {
    auto io0 = std::make_unique<asio::io_context>();
    auto io1 = std::make_unique<asio::io_context>();
    std::vector<asio::ip::tcp::socket> sockets0, sockets1;
    for (int i = 0; i < 3; ++i) {
      sockets0.emplace_back(*io0);
      sockets1.emplace_back(*io1);
    }
    socket_pair(*io0, sockets0[1], sockets1[0]);
    socket_pair(*io0, sockets0[2], rank2_at0);
    socket_pair(*io1, sockets1[2], rank2_at1);
    rank0 = std::make_shared<Engine>(0, 3, descriptors(sockets0), max_unexpected);
    rank1 = std::make_shared<Engine>(1, 3, descriptors(sockets1), max_unexpected);
  }
  asio::io_context rank2_io;
  asio::ip::tcp::socket rank2_at0{rank2_io}, rank2_at1{rank2_io};
  std::shared_ptr<Engine> rank0, rank1;
};

// Waits for a send on another thread (joined when it goes out of scope, even
// if a check throws); its error, if any, lands in `error`.
std::jthread waiting_thread(std::unique_ptr<Request>& request, std::string& error) {
  return std::jthread([&] {
    try {
      request->wait(5s);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
}

std::vector<int> pattern(std::size_t n, int seed) {
  std::vector<int> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int>(i * 2654435761u) ^ (seed * 7919);
  return v;
}

}  // namespace

TEST_SUITE("tcp_engine") {

// Issue 12, item 9: one 32-byte header claiming 2^34 bytes made the receiver
// reserve 16 GiB of virtual memory.
TEST_CASE("a header claiming 16 GiB on a tag nobody receives reserves nothing") {
  EngineWithRawPeers rank0(3);
  const std::size_t before = address_space();
  rank0.send_header(1, 99, std::uint64_t{1} << 34);
  // Rank 0 drives its sockets for a while (far past the moment a parked
  // payload would be moved into memory) waiting for a message from rank 2
  // that never comes.
  std::vector<int> got(1);
  auto receive = rank0.engine->irecv(2, 5, std::as_writable_bytes(std::span(got)));
  CHECK_THROWS_AS(receive->wait(400ms), TimeoutError);
  CHECK(address_space() < before + (std::size_t{1} << 30));
  // The rank goes on: a message from rank 2 still arrives.
  rank0.send_header(2, 6, 0);
  rank0.engine->irecv(2, 6, {})->wait(2s);
}

TEST_CASE("a rank forced to keep such a frame fails, naming the peer and the limit") {
  EngineWithRawPeers rank0;
  const std::size_t before = address_space();
  rank0.send_header(1, 99, std::uint64_t{1} << 34);
  std::this_thread::sleep_for(50ms);
  std::vector<int> got(1);
  // Drive once, so the frame is parked, then want a later message from rank 1.
  auto first = rank0.engine->irecv(1, 4, std::as_writable_bytes(std::span(got)));
  first->test();
  first.reset();
  auto later = rank0.engine->irecv(1, 5, std::as_writable_bytes(std::span(got)));
  const auto start = Clock::now();
  try {
    later->wait(2s);
    FAIL("the receive returned");
  } catch (const PeerError& error) {
    CHECK(error.peer() == 1);
    CHECK(std::string(error.what()).find("rank 0: rank 1 sent a message of 17179869184 bytes "
                                         "(tag 99) before its receive was posted") == 0);
    CHECK(std::string(error.what()).find("kMaxUnexpectedBytes") != std::string::npos);
    CHECK(std::string(error.what()).find(std::to_string(kMaxUnexpectedBytes) + " bytes") !=
          std::string::npos);
  }
  CHECK(Clock::now() - start < 1s);
  CHECK(address_space() < before + (std::size_t{1} << 30));
  // And the same when the receive from rank 1 was posted before the header came.
  EngineWithRawPeers other;
  auto posted = other.engine->irecv(1, 5, std::as_writable_bytes(std::span(got)));
  other.send_header(1, 99, std::uint64_t{1} << 34);
  CHECK_THROWS_WITH_AS(posted->wait(2s), doctest::Contains("rank 0: rank 1 sent a message of "),
                       PeerError);
}

TEST_CASE("above the limit, a posted receive takes its message, even one that arrived first") {
  constexpr std::uint64_t kLimit = 64 << 10;  // so a 1 MiB message is above it
  EnginePair pair(kLimit);
  const std::vector<int> big = pattern(std::size_t{1} << 18, 1);  // 1 MiB
  std::vector<int> got(big.size(), -1);
  SUBCASE("the receive is posted first") {
    auto receive = pair.rank0->irecv(1, 7, std::as_writable_bytes(std::span(got)));
    auto send = pair.rank1->isend(0, 7, std::as_bytes(std::span(big)));
    std::string send_error;
    std::jthread sender = waiting_thread(send, send_error);
    receive->wait(5s);
    sender.join();
    CHECK(send_error == "");
    CHECK(got == big);
  }
  SUBCASE("the message comes first and waits in the socket (well past the park limit)") {
    auto send = pair.rank1->isend(0, 7, std::as_bytes(std::span(big)));
    std::string send_error;
    std::jthread sender = waiting_thread(send, send_error);
    // Rank 0 drives its sockets meanwhile: the header is read, the payload waits.
    std::vector<int> small(1);
    auto other = pair.rank0->irecv(2, 8, std::as_writable_bytes(std::span(small)));
    const auto until = Clock::now() + 300ms;
    while (Clock::now() < until) {
      other->test();
      std::this_thread::sleep_for(10ms);
    }
    other.reset();
    auto receive = pair.rank0->irecv(1, 7, std::as_writable_bytes(std::span(got)));
    receive->wait(5s);
    sender.join();
    CHECK(send_error == "");
    CHECK(got == big);
  }
  SUBCASE("a message of another size than the posted receive is a size mismatch, as below it") {
    std::vector<int> wrong(big.size() / 2);
    auto receive = pair.rank0->irecv(1, 7, std::as_writable_bytes(std::span(wrong)));
    auto send = pair.rank1->isend(0, 7, std::as_bytes(std::span(big)));
    std::string send_error;
    std::jthread sender = waiting_thread(send, send_error);
    CHECK_THROWS_WITH_AS(receive->wait(5s),
                         doctest::Contains("rank 0 expected 524288 bytes from rank 1 (tag 7) but "
                                           "the message has 1048576 bytes"),
                         CommError);
    sender.join();
    CHECK(send_error == "");
  }
  SUBCASE("below the limit a message is kept in memory while a later one is received") {
    const std::vector<int> small = pattern(1000, 2);
    auto send_small = pair.rank1->isend(0, 7, std::as_bytes(std::span(small)));
    const std::vector<int> last{42};
    auto send_last = pair.rank1->isend(0, 8, std::as_bytes(std::span(last)));
    std::vector<int> got_last(1), got_small(small.size());
    pair.rank0->irecv(1, 8, std::as_writable_bytes(std::span(got_last)))->wait(5s);
    pair.rank0->irecv(1, 7, std::as_writable_bytes(std::span(got_small)))->wait(5s);
    CHECK(got_last == last);
    CHECK(got_small == small);
  }
}

TEST_CASE("a receive above the limit given up while its message arrives fails the connection") {
  EngineWithRawPeers rank0(2, 64 << 10);
  std::vector<std::byte> got(1 << 20);
  auto receive = rank0.engine->irecv(1, 7, got);
  rank0.send_header(1, 7, got.size());
  const std::vector<std::byte> part(100 << 10, std::byte{1});
  asio::write(*rank0.peers[1], asio::buffer(part));
  CHECK_THROWS_AS(receive->wait(200ms), TimeoutError);
  // The rest of that message has nowhere to go: rank 1's stream is lost.
  CHECK_THROWS_WITH_AS(rank0.engine->irecv(1, 8, {})->wait(1s),
                       doctest::Contains("rank 0: the receive of 1048576 bytes from rank 1 (tag 7) "
                                         "was given up while its message was arriving"),
                       PeerError);
}

// A peer that failed because of another rank sends an abort frame naming it,
// then exits; this rank's next write meets the closed socket before it has
// read the frame. Its error names the rank the abort named, as every other
// rank's does, not the peer that passed the news on.
TEST_CASE("a write that fails reads the abort frame that came first and names its culprit") {
  EngineWithRawPeers rank0(3);
  const std::vector<std::byte> abort = encode_abort({2, "rank 1: rank 2 crashed"});
  const auto header = encode_frame_header({FrameKind::Abort, 1, 0, abort.size()});
  asio::write(*rank0.peers[1], asio::buffer(header));
  asio::write(*rank0.peers[1], asio::buffer(abort));
  rank0.peers[1]->close();
  const std::vector<int> data(1024, 7);
  // The first write may still be taken (the peer's reset answers it).
  for (int attempt = 0; attempt < 50; ++attempt) {
    try {
      rank0.engine->isend(1, 4, std::as_bytes(std::span(data)))->wait(1s);
    } catch (const PeerError& error) {
      CHECK(error.peer() == 2);
      CHECK(std::string(error.what()).find("rank 2 crashed") != std::string::npos);
      return;
    }
    std::this_thread::sleep_for(10ms);
  }
  FAIL("no send to the closed peer failed");
}

TEST_CASE("a wait for a small message spins at first, and not for a while after a slow yield") {
  using namespace std::chrono;
  SpinPolicy policy{microseconds(200), 64 << 10, microseconds(1000), milliseconds(100)};
  const SpinPolicy::Clock::time_point t0{seconds(1000)};
  const std::size_t small = 64 << 10, large = (64 << 10) + 1;
  CHECK(policy.spins(small, t0, t0));
  CHECK(policy.spins(small, t0, t0 + microseconds(199)));
  CHECK_FALSE(policy.spins(small, t0, t0 + microseconds(200)));
  CHECK_FALSE(policy.spins(small, t0, t0 + seconds(2)));
  CHECK_FALSE(policy.spins(large, t0, t0));  // its wake-up is small next to its transfer
  policy.yielded(t0, t0 + microseconds(999));  // a yield that came back soon changes nothing
  CHECK(policy.spins(small, t0 + microseconds(999), t0 + microseconds(1000)));
  // A yield that took 1 ms: waits block for the next 100 ms, then spin again.
  const auto back = t0 + milliseconds(1);
  policy.yielded(t0, back);
  CHECK_FALSE(policy.spins(small, back, back));
  CHECK_FALSE(policy.spins(small, back + milliseconds(99), back + milliseconds(99)));
  CHECK(policy.spins(small, back + milliseconds(100), back + milliseconds(100)));
}

// A wait spins before it blocks (spin_policy.hpp), but only briefly: a
// rank that waits long for a slow peer leaves the processor to others.
TEST_CASE("a long wait spins only at its start: it takes little processor time") {
  EngineWithRawPeers rank0;
  const std::vector<int> sent{7, 8, 9};
  std::vector<int> got(sent.size());
  auto receive = rank0.engine->irecv(1, 3, std::as_writable_bytes(std::span(got)));
  std::jthread late_sender([&] {
    std::this_thread::sleep_for(300ms);
    const auto header = encode_frame_header({FrameKind::Data, 1, 3, sizeof(int) * sent.size()});
    asio::write(*rank0.peers[1], asio::buffer(header));
    asio::write(*rank0.peers[1], asio::buffer(sent));
  });
  timespec before{}, after{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &before);
  const auto start = Clock::now();
  receive->wait(5s);
  const auto waited = Clock::now() - start;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &after);
  const double cpu_ms =
      (after.tv_sec - before.tv_sec) * 1e3 + (after.tv_nsec - before.tv_nsec) / 1e6;
  CHECK(got == sent);
  CHECK(waited >= 250ms);
  CAPTURE(cpu_ms);
  CHECK(cpu_ms < 30);  // spinning throughout would take most of the 300 ms
}

}  // TEST_SUITE

// Writer threads (writers.hpp): with use_writers, large sends leave
// through a thread per connection while the caller's thread goes on.
TEST_SUITE("tcp_engine") {

// Reads `bytes` bytes from a raw peer's socket (after its frame header).
std::vector<std::byte> read_frame(asio::ip::tcp::socket& socket, std::size_t bytes) {
  FrameHeaderBytes header{};
  asio::read(socket, asio::buffer(header));
  const FrameDecode decoded = decode_frame_header(header);
  REQUIRE(decoded.header);
  CHECK(decoded.header->length == bytes);
  std::vector<std::byte> payload(bytes);
  asio::read(socket, asio::buffer(payload));
  return payload;
}

TEST_CASE("a large send goes out through a writer while the caller's thread receives") {
  EnginePair pair(kMaxUnexpectedBytes);
  pair.rank0->use_writers(256 << 10);
  pair.rank1->use_writers(256 << 10);
  // Both ways at once, each 8 MiB: far more than the sockets hold, so each
  // side must read while its writer still writes.
  const std::vector<int> from0 = pattern(std::size_t{2} << 20, 3), from1 = pattern(std::size_t{2} << 20, 4);
  std::vector<int> at0(from1.size(), -1), at1(from0.size(), -1);
  std::string error1;
  std::jthread rank1([&] {
    try {
      auto receive = pair.rank1->irecv(0, 9, std::as_writable_bytes(std::span(at1)));
      auto send = pair.rank1->isend(0, 9, std::as_bytes(std::span(from1)));
      send->wait(10s);
      receive->wait(10s);
    } catch (const std::exception& e) {
      error1 = e.what();
    }
  });
  auto receive = pair.rank0->irecv(1, 9, std::as_writable_bytes(std::span(at0)));
  auto send = pair.rank0->isend(1, 9, std::as_bytes(std::span(from0)));
  receive->wait(10s);
  send->wait(10s);
  rank1.join();
  CHECK(error1 == "");
  CHECK(at0 == from1);
  CHECK(at1 == from0);
}

TEST_CASE("a dropped send keeps its bytes even while its writer is writing them") {
  EngineWithRawPeers rank0;
  rank0.engine->use_writers(0);
  // 8 MiB to a peer that does not read yet: the writer fills the socket and
  // waits for room, in the middle of the payload.
  auto data = std::make_unique<std::vector<int>>(pattern(std::size_t{2} << 20, 5));
  const std::vector<int> expected = *data;
  auto send = rank0.engine->isend(1, 3, std::as_bytes(std::span(*data)));
  std::this_thread::sleep_for(100ms);
  send.reset();  // the caller may reuse or free its buffer now
  std::fill(data->begin(), data->end(), -7);
  data.reset();
  const std::vector<std::byte> got =
      read_frame(*rank0.peers[1], expected.size() * sizeof(int));
  CHECK(std::memcmp(got.data(), expected.data(), got.size()) == 0);
}

TEST_CASE("a peer that goes away while the writer writes fails the send, naming it") {
  EngineWithRawPeers rank0;
  rank0.engine->use_writers(0);
  const std::vector<int> data = pattern(std::size_t{4} << 20, 6);  // 16 MiB: more than the socket holds
  auto send = rank0.engine->isend(1, 3, std::as_bytes(std::span(data)));
  std::this_thread::sleep_for(100ms);
  rank0.peers[1]->close();
  try {
    send->wait(5s);
    FAIL("the send returned");
  } catch (const PeerError& error) {
    CHECK(error.peer() == 1);
  }
}

}  // TEST_SUITE

// The rules where a writer's call, a goodbye, a failure and a dropped request
// meet (send_custody.hpp), on queues built by hand: what each rule lets go of
// and what it keeps, as its comment states it.
TEST_SUITE("tcp_engine") {

std::shared_ptr<SendOp> queued_send(std::size_t size, std::size_t written) {
  auto op = std::make_shared<SendOp>();
  op->size = size;
  op->written = written;
  return op;
}

TEST_CASE("after a goodbye only the send a writer's call holds may still have gone whole") {
  const auto a = queued_send(100, 0), b = queued_send(100, 0);
  CHECK_FALSE(custody::needs_departed_peer({}, nullptr));
  CHECK(custody::needs_departed_peer({a}, nullptr));      // the driver's: not written
  CHECK_FALSE(custody::needs_departed_peer({a}, a.get()));  // in a call: the call decides
  CHECK(custody::needs_departed_peer({a, b}, a.get()));   // b waits behind it
}

TEST_CASE("a failure fails every send but the one in a call, and keeps a frame begun") {
  const auto begun = queued_send(100, 30), waiting = queued_send(100, 0);
  custody::OnFailure driver = custody::on_failure({begun, waiting}, nullptr);
  CHECK(driver.fail_now.size() == 2);
  CHECK(driver.unfinished == begun);  // an abort frame may not cut it short

  const auto in_call = queued_send(100, 0);
  custody::OnFailure writer = custody::on_failure({in_call, waiting}, in_call.get());
  REQUIRE(writer.fail_now.size() == 1);
  CHECK(writer.fail_now[0] == waiting);  // the call's send is its writer's to fail
  CHECK(writer.unfinished == in_call);   // it may be half written when the call is back

  custody::OnFailure untouched = custody::on_failure({waiting}, nullptr);
  CHECK(untouched.fail_now.size() == 1);
  CHECK(untouched.unfinished == nullptr);  // nothing of it went out: dropped
}

TEST_CASE("dropping a request waits only for a call that reads its own payload") {
  const auto a = queued_send(100, 0), b = queued_send(100, 0);
  CHECK(custody::drop_waits_for_call(*a, a.get()));
  CHECK_FALSE(custody::drop_waits_for_call(*a, b.get()));
  CHECK_FALSE(custody::drop_waits_for_call(*a, nullptr));
}

}  // TEST_SUITE

// The performance policy (engine_policy.hpp) at its edges: writers from two
// processors per rank, crowded from one rank more than processors.
TEST_SUITE("tcp_engine") {
TEST_CASE("writer threads need two processors per rank; crowding, more ranks than processors") {
  CHECK(policy_for({.processors = 16, .ranks_here = 8}).writers);
  CHECK_FALSE(policy_for({.processors = 15, .ranks_here = 8}).writers);
  CHECK_FALSE(policy_for({.processors = 2, .ranks_here = 2}).writers);
  CHECK_FALSE(policy_for({.processors = 2, .ranks_here = 2}).crowded);
  CHECK(policy_for({.processors = 2, .ranks_here = 3}).crowded);
  CHECK_FALSE(policy_for({.processors = 16, .ranks_here = 16}).crowded);
}
}  // TEST_SUITE
