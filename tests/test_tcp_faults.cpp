// Faults over TCP: a rank that dies mid-collective (killed: no goodbye) or
// leaves while still needed makes EVERY wait of every other rank fail
// promptly with a PeerError naming it, even waits on other survivors; a rank
// that leaves cleanly fails nobody who no longer needs it; a rank that is
// alive but silent makes the others time out naming it; garbage on a rank's
// listening port during the rendezvous is logged and refused while the job
// goes on.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "test_tcp_util.hpp"
#include "transport/tcp/framing.hpp"

using namespace ringlab;
using namespace ringlab::store;
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

// Runs body on `world` forked processes (real processes: one can be killed),
// each connected over TCP. Each returns its Outcome through a pipe: "" if
// its body returned. Fork happens before any thread of this test starts.
std::vector<Outcome> run_tcp_processes(int world, Duration timeout,
                                       const std::function<void(ProcessGroup&)>& body) {
  const int port = free_port();
  std::vector<int> pipes(static_cast<std::size_t>(world), -1);
  std::vector<pid_t> children;
  for (int rank = 0; rank < world; ++rank) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      Outcome outcome;
      const auto start = Clock::now();
      try {
        ProcessGroupOptions options;
        options.timeout = timeout;
        ProcessGroup pg(connect(local_rendezvous(world, rank, port, timeout)), options);
        body(pg);
      } catch (const PeerError& error) {
        outcome.error = error.what();
        outcome.peer = error.peer();
      } catch (const std::exception& error) {
        outcome.error = error.what();
        outcome.timeout = dynamic_cast<const TimeoutError*>(&error) != nullptr;
      }
      const long long ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
      const std::string line = std::to_string(outcome.peer) + " " + std::to_string(ms) + " " +
                               (outcome.timeout ? "1 " : "0 ") + outcome.error;
      [[maybe_unused]] auto ignored = ::write(fds[1], line.data(), line.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    pipes[static_cast<std::size_t>(rank)] = fds[0];
    children.push_back(pid);
  }
  std::vector<Outcome> outcomes(static_cast<std::size_t>(world));
  for (int rank = 0; rank < world; ++rank) {
    std::string text;
    char chunk[4096];
    for (ssize_t n; (n = ::read(pipes[static_cast<std::size_t>(rank)], chunk, sizeof chunk)) > 0;)
      text.append(chunk, static_cast<std::size_t>(n));
    ::close(pipes[static_cast<std::size_t>(rank)]);
    Outcome& outcome = outcomes[static_cast<std::size_t>(rank)];
    if (text.empty()) {  // it died without a word
      outcome.error = "(no outcome: killed)";
      continue;
    }
    long long peer = -1, ms = 0;
    int timed_out = 0, used = 0;
    std::sscanf(text.c_str(), "%lld %lld %d %n", &peer, &ms, &timed_out, &used);
    outcome.peer = static_cast<int>(peer);
    outcome.took = std::chrono::milliseconds(ms);
    outcome.timeout = timed_out != 0;
    outcome.error = text.substr(static_cast<std::size_t>(used));
  }
  for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  return outcomes;
}
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
  // Rank 0 receives from rank 2 in the ring; rank 1 waits on rank 0 (and
  // sends to rank 2): both name rank 2, rank 1 through rank 0's abort.
  INFO("rank 0: " << outcomes[0].error);
  INFO("rank 1: " << outcomes[1].error);
  CHECK(outcomes[0].peer == 2);
  CHECK(outcomes[0].error.find("rank 0: rank 2 shut down its transport") == 0);
  CHECK(outcomes[1].peer == 2);
  CHECK(outcomes[1].error.find("rank 2 shut down its transport") != std::string::npos);
  for (int rank = 0; rank < 2; ++rank) CHECK(outcomes[static_cast<std::size_t>(rank)].took < 2500ms);
}

TEST_CASE("a rank killed mid-collective: every survivor names it, even one waiting on a survivor") {
  // 4 ranks (a ring: each waits on its left neighbour): rank 2 dies while
  // all_reduce moves 4 MiB, so rank 0 and rank 1 wait on survivors.
  const auto outcomes = run_tcp_processes(4, 10s, [](ProcessGroup& pg) {
    for (int i = 0; i < 4; ++i) {
      Tensor t = Tensor::zeros(1 << 20, DType::Float32);
      if (pg.rank() == 2 && i == 2) {
        Work work = pg.all_reduce_async(t);
        std::this_thread::sleep_for(5ms);
        ::raise(SIGKILL);
      }
      pg.all_reduce(t);
    }
  });
  CHECK(outcomes[2].error == "(no outcome: killed)");
  for (int rank : {0, 1, 3}) {
    const Outcome& outcome = outcomes[static_cast<std::size_t>(rank)];
    CAPTURE(rank);
    INFO(outcome.error);
    CHECK(outcome.peer == 2);
    CHECK_FALSE(outcome.timeout);
    CHECK(outcome.error.find("rank 2 probably exited or crashed") != std::string::npos);
    CHECK(outcome.took < 5s);  // the start-up and two all_reduce, not the 10 s timeout
  }
}

TEST_CASE("a rank that finished and left cleanly fails nobody who no longer needs it") {
  // Rank 0 sends its last messages and leaves (goodbye) long before ranks 1
  // and 2 are done with each other and with what it sent them.
  const auto errors = run_tcp(3, [](TcpTransport& t) {
    std::vector<int> value{40 + t.rank()};
    if (t.rank() == 0) {
      t.send(1, 1, std::as_bytes(std::span(value)));
      t.send(2, 1, std::as_bytes(std::span(value)));
      return;
    }
    std::this_thread::sleep_for(200ms);  // rank 0 is gone by now
    const int other = 3 - t.rank();
    std::vector<float> out(1 << 16, static_cast<float>(t.rank())), in(out.size());
    for (unsigned round = 0; round < 10; ++round) {
      t.sendrecv(other, 10 + round, std::as_bytes(std::span(out)), other, 10 + round,
                 std::as_writable_bytes(std::span(in)));
      CHECK(in[0] == static_cast<float>(other));
    }
    std::vector<int> got(1);
    t.recv(0, 1, std::as_writable_bytes(std::span(got)));
    CHECK(got[0] == 40);
  });
  CHECK(first_error(errors) == "");
}

TEST_CASE("a rank needed after it left: every wait fails naming it, on every rank, now and later") {
  // Rank 2 leaves at once. Rank 1 waits to receive from it; rank 0 waits on
  // rank 1, which will never send: it learns of rank 2 from rank 1's abort.
  std::vector<Outcome> outcomes(3);
  const auto errors = run_tcp(3, [&](TcpTransport& t) {
    if (t.rank() == 2) return;
    Outcome& outcome = outcomes[static_cast<std::size_t>(t.rank())];
    std::vector<int> got(1);
    const auto start = Clock::now();
    try {
      t.recv(t.rank() == 1 ? 2 : 1, 1, std::as_writable_bytes(std::span(got)));
      outcome.error = "(recv returned)";
    } catch (const PeerError& error) {
      outcome.error = error.what();
      outcome.peer = error.peer();
    }
    outcome.took = Clock::now() - start;
    // Every later operation fails at once the same way, whatever the peer.
    const int healthy = t.rank() == 1 ? 0 : 1;
    const auto later = Clock::now();
    CHECK_THROWS_WITH_AS(t.recv(healthy, 2, std::as_writable_bytes(std::span(got))),
                         outcome.error.c_str(), PeerError);
    CHECK_THROWS_WITH_AS(t.send(healthy, 3, std::as_bytes(std::span(got))), outcome.error.c_str(),
                         PeerError);
    CHECK(Clock::now() - later < 100ms);
  });
  CHECK(first_error(errors) == "");
  INFO("rank 0: " << outcomes[0].error);
  INFO("rank 1: " << outcomes[1].error);
  CHECK(outcomes[1].peer == 2);
  CHECK(outcomes[1].error ==
        "rank 1: rank 2 shut down its transport (its program finished or stopped) while rank 1 "
        "still needed it, to receive from it (tag 1): rank 2 stopped early, or the ranks did not "
        "run the same collectives");
  CHECK(outcomes[0].peer == 2);
  // Rank 0 names rank 2 first, as rank 1 does, then who told it.
  CHECK(outcomes[0].error ==
        "rank 0: rank 2 failed or stopped answering (rank 1 gave up because of "
        "it: " +
            outcomes[1].error + ")");
  for (int rank = 0; rank < 2; ++rank) CHECK(outcomes[static_cast<std::size_t>(rank)].took < 2s);
}

TEST_CASE("what a rank sent before it left stays receivable; a receive from it after that fails") {
  const auto errors = run_tcp(2, [](TcpTransport& t) {
    if (t.rank() == 1) {
      const std::vector<int> last{42};
      t.send(0, 1, std::as_bytes(std::span(last)));
      return;  // leaves: goodbye
    }
    std::this_thread::sleep_for(200ms);
    std::vector<int> got(1);
    t.recv(1, 1, std::as_writable_bytes(std::span(got)));
    CHECK(got[0] == 42);
    // Nothing more will come: a PeerError naming rank 1, at once.
    const auto start = Clock::now();
    CHECK_THROWS_WITH_AS(t.recv(1, 1, std::as_writable_bytes(std::span(got))),
                         doctest::Contains("rank 0: rank 1 shut down its transport"), PeerError);
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
  StoreClient store("127.0.0.1", port, 5s);
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
    truncated.send("RLTF\x02\x00", 6);
    truncated.close();
    CHECK(log.wait_for({"rank 1: rejected", "closed after 6 of the 96 handshake bytes"}));
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
