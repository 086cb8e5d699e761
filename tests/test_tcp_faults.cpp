// Faults over TCP: a rank that goes away mid-collective makes the waits on it
// fail promptly with a PeerError naming it; a rank that is alive but silent
// makes the others time out naming it; garbage on a rank's listening port
// during the rendezvous is logged and refused while the job goes on.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>

#include "test_tcp_util.hpp"
#include "transport/tcp/framing.hpp"

using namespace ringlab;
using namespace ringlab::tcp;
using namespace ringlab::tcp::testing;
using namespace std::chrono_literals;

namespace {
using Clock = std::chrono::steady_clock;

struct Outcome {
  std::string error;
  int peer = -1;  // PeerError::peer(), or -1
  bool timeout = false;
  Clock::duration took{};
};
}  // namespace

TEST_SUITE("tcp_faults") {

TEST_CASE("a rank that exits mid-collective: the others get a PeerError naming it, promptly") {
  const int port = free_port();
  std::vector<Outcome> outcomes(3);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank)
    threads.emplace_back([&, rank] {
      Outcome& outcome = outcomes[static_cast<std::size_t>(rank)];
      ProcessGroupOptions options;
      options.timeout = 10s;  // far longer than the test allows: failure must not wait for it
      auto pg = std::make_unique<ProcessGroup>(connect(local_rendezvous(3, rank, port, 10s)), options);
      if (rank == 2) {
        std::this_thread::sleep_for(300ms);  // the others are inside all_reduce by now
        pg.reset();                          // the process "exits": its sockets close
        return;
      }
      const auto start = Clock::now();
      try {
        Tensor t = Tensor::zeros(1 << 16, DType::Float32);
        pg->all_reduce(t);
        outcome.error = "(all_reduce returned)";
      } catch (const PeerError& error) {
        outcome.error = error.what();
        outcome.peer = error.peer();
      } catch (const std::exception& error) {
        outcome.error = error.what();
      }
      outcome.took = Clock::now() - start;
      pg.reset();  // a failed rank exits too
    });
  for (auto& thread : threads) thread.join();
  // Rank 0 receives from rank 2 in the ring: it must name rank 2.
  INFO("rank 0: " << outcomes[0].error);
  INFO("rank 1: " << outcomes[1].error);
  CHECK(outcomes[0].peer == 2);
  CHECK(outcomes[0].error.find("rank 0: connection to rank 2 closed") != std::string::npos);
  CHECK(outcomes[0].error.find("rank 2 probably exited or crashed") != std::string::npos);
  // Rank 1 waits on rank 2 or on rank 0 (which failed and exited): a PeerError either way.
  CHECK((outcomes[1].peer == 2 || outcomes[1].peer == 0));
  CHECK(outcomes[1].error.find("probably exited or crashed") != std::string::npos);
  for (int rank = 0; rank < 2; ++rank) CHECK(outcomes[static_cast<std::size_t>(rank)].took < 2500ms);
}

TEST_CASE("what a rank sent before it exited is still received, even after sending to it failed") {
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    if (t.rank() == 1) {
      const std::vector<int> last{42};
      t.send(0, 1, std::as_bytes(std::span(last)));
      return;  // exits: its transport closes
    }
    std::this_thread::sleep_for(200ms);
    // Writing to a closed connection fails on the first or second try (the
    // peer answers the first with a reset).
    bool send_failed = false;
    std::vector<int> one{1};
    for (int i = 0; i < 50 && !send_failed; ++i) {
      try {
        t.send(1, 2, std::as_bytes(std::span(one)));
        std::this_thread::sleep_for(10ms);
      } catch (const PeerError& error) {
        send_failed = error.peer() == 1;
        CHECK(std::string(error.what()).find("rank 0: connection to rank 1 failed while sending") == 0);
      }
    }
    CHECK(send_failed);
    std::vector<int> got(1);
    t.recv(1, 1, std::as_writable_bytes(std::span(got)));
    CHECK(got[0] == 42);
    // Nothing more will come: the end of the stream is a PeerError, at once.
    const auto start = Clock::now();
    CHECK_THROWS_WITH_AS(t.recv(1, 1, std::as_writable_bytes(std::span(got))),
                         "rank 0: connection to rank 1 closed (end of stream): rank 1 probably "
                         "exited or crashed",
                         PeerError);
    CHECK(Clock::now() - start < 1s);
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("a rank that is alive but never joins the collective: a timeout naming it") {
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    ProcessGroupOptions options;
    options.timeout = 300ms;
    ProcessGroup pg(std::shared_ptr<Transport>(&t, [](Transport*) {}), options);
    if (pg.rank() == 1) {
      std::this_thread::sleep_for(800ms);
      return;
    }
    Tensor t1 = Tensor::zeros(4, DType::Float32);
    const auto start = Clock::now();
    CHECK_THROWS_WITH_AS(pg.all_reduce(t1),
                         doctest::Contains("rank 0 timed out after 300 ms waiting to receive from rank 1"),
                         TimeoutError);
    CHECK(Clock::now() - start < 1500ms);
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("garbage on a rank's port during the rendezvous is refused; the job goes on") {
  LogCapture log;
  const int port = free_port();
  std::vector<std::string> errors(3);
  std::vector<float> sums(3, -1);
  auto rank_main = [&](int rank) {
    try {
      ProcessGroup pg(connect(local_rendezvous(3, rank, port, 10s)));  // handshake timeout 300 ms
      Tensor t = Tensor::of({1.0 + rank});
      pg.all_reduce(t);
      sums[static_cast<std::size_t>(rank)] = static_cast<float>(t.item_as_double(0));
    } catch (const std::exception& error) {
      errors[static_cast<std::size_t>(rank)] = error.what();
    }
  };
  std::vector<std::thread> threads;
  // Join the ranks however this test ends (a failed check below may throw).
  struct JoinAll {
    std::vector<std::thread>& threads;
    ~JoinAll() {
      for (auto& thread : threads)
        if (thread.joinable()) thread.join();
    }
  } join_all{threads};
  threads.emplace_back(rank_main, 0);
  threads.emplace_back(rank_main, 1);

  // Rank 1 publishes its address and then waits for rank 2 to connect: that
  // is when the garbage arrives.
  Store store("127.0.0.1", port, 5s);
  const std::string rank1 = store.get("ringlab/tcp/addr/1", 5s);
  {
    RawClient http(rank1);
    http.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    CHECK(http.closed_within(2s));
    CHECK(log.wait_for({"rank 1: rejected the connection from 127.0.0.1:",
                        "bad magic 47 45 54 20 (expected RLTF): not a ringlab rank"}));
  }
  {
    RawClient truncated(rank1);
    truncated.send("RLTF\x01\x00", 6);
    truncated.close();
    CHECK(log.wait_for({"rank 1: rejected", "closed after 6 of the 48 handshake bytes"}));
  }
  {
    RawClient absurd(rank1);
    const auto header = encode_frame_header({FrameKind::Hello, 2, 0, std::uint64_t{1} << 40});
    const auto hello = encode_hello({3, 1, 0});
    absurd.send(header.data(), header.size());
    absurd.send(hello.data(), hello.size());
    CHECK(absurd.closed_within(2s));
    CHECK(log.wait_for({"rank 1: rejected", "handshake frame with payload length 1099511627776"}));
  }
  {
    RawClient stranger(rank1);  // a well-formed hello from another job
    const auto header = encode_frame_header({FrameKind::Hello, 2, 0, kHelloBytes});
    const auto hello = encode_hello({3, 1, 12345});
    stranger.send(header.data(), header.size());
    stranger.send(hello.data(), hello.size());
    CHECK(stranger.closed_within(2s));
    CHECK(log.wait_for({"rank 1: rejected", "it belongs to another job (job id 12345"}));
  }
  {
    RawClient silent(rank1);
    CHECK(silent.closed_within(2s));
    CHECK(log.wait_for({"rank 1: rejected", "it sent nothing within the handshake timeout (300 ms)"}));
  }
  // Only now does rank 2 start; the job completes.
  threads.emplace_back(rank_main, 2);
  for (auto& thread : threads) thread.join();
  CHECK(first_error(errors) == "");
  CHECK(sums == std::vector<float>{6, 6, 6});
}

}  // TEST_SUITE
