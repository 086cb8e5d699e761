// Jobs are private to their members (issue 12, items 4 and 5). Each job has
// a secret token (RINGLAB_JOB_TOKEN); the store and every rank's handshake
// demand proof of it. The attack (a process that reaches the store
// reads the job id, claims rank 1, passes the handshake and sends rank 0 its
// own numbers) and two jobs on one MASTER_PORT are replayed here: the
// intruder fails with a clear error and the job's result is right.
// Ranks are threads of this process reading their variables from a map, as
// a process reads its environment.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launcher/launcher.hpp"
#include "store/protocol.hpp"
#include "store/token_proof.hpp"
#include "store_wire.hpp"
#include "test_tcp_util.hpp"
#include "transport/tcp/framing.hpp"

using namespace ringlab;
using namespace ringlab::store;
using namespace ringlab::tcp;
using namespace ringlab::tcp::testing;
using namespace std::chrono_literals;

namespace {

using Variables = std::map<std::string, std::string>;

WorldSpec rank_of(int world, int rank, int port, const std::string& token) {
  Variables variables{{"MASTER_ADDR", "127.0.0.1"},    {"MASTER_PORT", std::to_string(port)},
                      {"RANK", std::to_string(rank)},  {"WORLD_SIZE", std::to_string(world)},
                      {"RINGLAB_TIMEOUT_MS", "10000"}, {"RINGLAB_HANDSHAKE_TIMEOUT_MS", "500"}};
  if (!token.empty()) variables["RINGLAB_JOB_TOKEN"] = token;
  return from_environment([&](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

// One rank of a 2-rank job: all_reduce of [a, b]; returns the result or the error.
struct Outcome {
  std::vector<std::int64_t> result;
  std::string error;
  std::string text() const {
    if (result.empty()) return "error: " + error;
    return "[" + std::to_string(result[0]) + ", " + std::to_string(result[1]) + "]";
  }
};
Outcome all_reduce_rank(const WorldSpec& r, std::int64_t a, std::int64_t b) {
  Outcome outcome;
  try {
    ProcessGroup pg(connect(r));
    Tensor t = Tensor::of({a, b});
    pg.all_reduce(t);
    outcome.result = {t.data<std::int64_t>()[0], t.data<std::int64_t>()[1]};
  } catch (const std::exception& error) {
    outcome.error = error.what();
  }
  return outcome;
}

// The RINGLAB_JOB_TOKEN each rank of a launch of `ranks` ranks sees, one
// line per rank.
std::multiset<std::string> tokens_seen(int ranks, ringlab::launch::LaunchOptions options = {}) {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  options.nproc_per_node = ranks;
  options.program = {"/bin/sh", "-c", "echo \"token=$RINGLAB_JOB_TOKEN\""};
  options.stdout_fd = fileno(out);
  options.deadline = std::chrono::seconds(30);
  if (options.nnodes > 1) options.master_port = free_port();
  const auto result = ringlab::launch::launch(options);
  CHECK(result.exit_code == 0);
  std::rewind(out);
  std::multiset<std::string> lines;
  char line[256];
  while (std::fgets(line, sizeof line, out))
    lines.insert(std::string(line, std::strcspn(line, "\n")));
  std::fclose(out);
  return lines;
}

}  // namespace

TEST_SUITE("job_token") {
  TEST_CASE("ringlab run gives the ranks of a launch one fresh token, or passes on the one given") {
    ::unsetenv("RINGLAB_JOB_TOKEN");
    const auto first = tokens_seen(3);
    const auto second = tokens_seen(3);
    REQUIRE(first.size() == 3);
    const std::string token = *first.begin();
    CHECK(first.count(token) == 3);  // the same for every rank
    CHECK(token.size() == std::string("token=").size() + 64);
    CHECK(token.find_first_not_of("0123456789abcdef", 6) == std::string::npos);
    CHECK(second.count(token) == 0);  // another launch, another token

    ringlab::launch::LaunchOptions given;
    given.extra_environment = {{"RINGLAB_JOB_TOKEN", "chosen"}};
    CHECK(tokens_seen(2, given) == std::multiset<std::string>{"token=chosen", "token=chosen"});
    ::setenv("RINGLAB_JOB_TOKEN", "from the environment", 1);
    CHECK(tokens_seen(2) ==
          std::multiset<std::string>{"token=from the environment", "token=from the environment"});
    ::unsetenv("RINGLAB_JOB_TOKEN");

    // Several nodes: none is made up (each node would make its own).
    ringlab::launch::LaunchOptions node;
    node.nnodes = 2;
    CHECK(tokens_seen(2, node) == std::multiset<std::string>{"token=", "token="});
  }

  TEST_CASE("a process without the job's token cannot join it (the issue's attack)") {
    const int port = free_port();
    const std::string token = "job-A-7f3c9a";
    Outcome rank0, intruder, rank1;
    std::thread first([&] { rank0 = all_reduce_rank(rank_of(2, 0, port, token), 1, 2); });

    // It reaches the store, which would give it the job id and rank 0's
    // address; it claims rank 1 and sends 1337.
    intruder = all_reduce_rank(rank_of(2, 1, port, ""), 1337, 1337);
    INFO("the intruder: " << intruder.text());
    CHECK(intruder.result.empty());
    CHECK(intruder.error.find("rank 1: the store at 127.0.0.1:" + std::to_string(port) +
                              " does not know this rank's job token") != std::string::npos);

    // A store client without the token gets nothing out of the store either.
    CHECK_THROWS_WITH_AS(StoreClient("127.0.0.1", port, 2s), doctest::Contains("job token"),
                         WrongStoreError);

    // The real rank 1 joins, and rank 0's result is the job's own.
    rank1 = all_reduce_rank(rank_of(2, 1, port, token), 3, 4);
    first.join();
    INFO("rank 0: " << rank0.text() << "; rank 1: " << rank1.text());
    CHECK(rank0.error == "");
    CHECK(rank1.error == "");
    CHECK(rank0.result == std::vector<std::int64_t>{4, 6});
    CHECK(rank1.result == std::vector<std::int64_t>{4, 6});
  }

  TEST_CASE("the store serves nothing to a client that cannot prove the token") {
    LogCapture log;
    StoreServer server("127.0.0.1", 0, 2s, {}, "the job's token");
    StoreClient("127.0.0.1", server.port(), 2s, "the job's token").set("secret", "value");

    // A client that ignores the store's proof and sends one made with a guess.
    StoreWire guesser(server.port(), "a guess");
    CHECK_FALSE(guesser.hello());
    CHECK(guesser.closed_within(2s));
    CHECK(log.wait_for(
        {"rejected the connection from 127.0.0.1:", "it does not know this job's token"}));

    // One that skips the proof and asks at once.
    StoreWire skipper(server.port());
    const std::string nonce(kNonceBytes, 'n');
    skipper.request(StoreOp::Hello, {nonce});
    const auto challenge = skipper.read_reply(2s);
    REQUIRE(challenge);
    CHECK(challenge->strings.size() == 2);  // a nonce and a proof, nothing of the store's
    skipper.request(StoreOp::Get, {"secret"}, 1000);
    CHECK(skipper.closed_within(2s));
    CHECK(log.wait_for({"it answered the store's challenge with get, not auth"}));

    StoreWire holder(server.port(), "the job's token");
    CHECK(holder.hello());
    holder.request(StoreOp::Get, {"secret"}, 1000);
    const auto value = holder.read_reply(2s);
    REQUIRE(value);
    CHECK(value->strings == std::vector<std::string>{"value"});
  }

  TEST_CASE("a handshake forged with the right job id but no token is refused") {
    LogCapture log;
    const int port = free_port();
    const std::string token = "job-B-51aa02";
    Outcome rank0, rank1;
    std::thread first([&] { rank0 = all_reduce_rank(rank_of(2, 0, port, token), 1, 2); });

    // Say the intruder learned the job id and rank 0's listener some other
    // way (here: from the store, with the token).
    StoreClient store("127.0.0.1", port, 5s, token);
    std::uint64_t job_id = 0;
    std::istringstream(store.get("ringlab/tcp/job", 5s)) >> job_id;
    const std::string rank0_address = store.get("ringlab/tcp/addr/0", 5s);
    {
      RawClient forger(rank0_address);
      const auto header = encode_frame_header({FrameKind::Hello, 1, 0, kHelloBytes});
      Hello hello{2, 0, job_id};
      hello.nonce.fill(std::byte{7});
      const auto first_hello = encode_hello(hello);
      forger.send(header.data(), header.size());
      forger.send(first_hello.data(), first_hello.size());
      // Whatever rank 0 answers, the forger cannot make the proof: it sends
      // zeros, then 1337s.
      forger.send(header.data(), header.size());
      forger.send(first_hello.data(), first_hello.size());
      const std::vector<std::int64_t> numbers(2, 1337);
      forger.send(numbers.data(), sizeof(std::int64_t) * numbers.size());
      CHECK(forger.closed_within(3s));
    }
    CHECK(log.wait_for(
        {"rank 0: rejected the connection from 127.0.0.1:", "it does not know this job's token"}));

    rank1 = all_reduce_rank(rank_of(2, 1, port, token), 3, 4);
    first.join();
    INFO("rank 0: " << rank0.text() << "; rank 1: " << rank1.text());
    CHECK(rank0.error == "");
    CHECK(rank1.error == "");
    CHECK(rank0.result == std::vector<std::int64_t>{4, 6});
  }

  TEST_CASE("a listener that cannot prove the token is not taken for a lower rank") {
    // The store is the job's (this test holds the token and plays rank 0's part
    // in it), but the address published for rank 0 is an impostor's, which
    // answers rank 1's hello with a hello_ack whose proof is made up.
    LogCapture log;
    const std::string token = "job-C-0d44e1";
    WorldSpec r1 = rank_of(2, 1, free_port(), token);
    r1.timeout = 1500ms;
    StoreServer server("127.0.0.1", r1.master_port, 2s, {}, token);
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor impostor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    StoreClient store("127.0.0.1", r1.master_port, 2s, token);
    store.set("ringlab/tcp/job", "4242 2");
    store.set("ringlab/tcp/addr/0",
              "127.0.0.1:" + std::to_string(impostor.local_endpoint().port()));
    std::thread answering([&] {
      auto socket = impostor.accept();
      std::array<std::byte, kFrameHeaderBytes + kHelloBytes> hello{};
      boost::asio::read(socket, boost::asio::buffer(hello));
      Hello ack{2, 1, 4242};
      ack.nonce.fill(std::byte{1});
      ack.proof.fill(std::byte{2});
      const auto header = encode_frame_header({FrameKind::HelloAck, 0, 0, kHelloBytes});
      boost::asio::write(socket, boost::asio::buffer(header));
      boost::asio::write(socket, boost::asio::buffer(encode_hello(ack)));
      boost::system::error_code ignored;
      boost::asio::read(socket, boost::asio::buffer(hello), ignored);  // until rank 1 hangs up
    });
    std::string error;
    try {
      connect(r1);
    } catch (const std::exception& e) {
      error = e.what();
    }
    answering.join();
    INFO(error);
    CHECK(error.find("rank 1: timed out after 1500 ms connecting to the other ranks: rank 0 did "
                     "not show up") == 0);
    CHECK(error.find("bad handshake: it does not know this job's token") != std::string::npos);
    CHECK(
        log.wait_for({"rank 1: the listener published for rank 0 answered with a bad handshake: "
                      "it does not know this job's token"}));
  }

  TEST_CASE("two jobs on one MASTER_PORT stay apart; the stray rank says it reached another job") {
    const int port = free_port();
    Outcome a0, a1, b0, b1;
    std::thread job_a_rank0([&] { a0 = all_reduce_rank(rank_of(2, 0, port, "job-A"), 1, 2); });
    std::this_thread::sleep_for(200ms);  // job A's store is up

    // Job B on the same port: its rank 0 cannot host the store, its rank 1
    // reaches job A's.
    b0 = all_reduce_rank(rank_of(2, 0, port, "job-B"), 10, 20);
    CHECK(b0.error.find("pick another MASTER_PORT") != std::string::npos);
    const auto start = std::chrono::steady_clock::now();
    b1 = all_reduce_rank(rank_of(2, 1, port, "job-B"), 30, 40);
    INFO("job B's rank 1: " << b1.text());
    CHECK(b1.result.empty());
    CHECK(b1.error.find("rank 1: the store at 127.0.0.1:" + std::to_string(port) +
                        " does not know this rank's job token: it is another job's store") !=
          std::string::npos);
    CHECK(b1.error.find("timed out") == std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < 3s);

    a1 = all_reduce_rank(rank_of(2, 1, port, "job-A"), 3, 4);
    job_a_rank0.join();
    INFO("job A's rank 0: " << a0.text() << "; job A's rank 1: " << a1.text());
    CHECK(a0.error == "");
    CHECK(a1.error == "");
    CHECK(a0.result == std::vector<std::int64_t>{4, 6});
    CHECK(a1.result == std::vector<std::int64_t>{4, 6});
  }

  TEST_CASE("binding beyond loopback needs a token") {
    WorldSpec r = rank_of(1, 0, free_port(), "");
    r.bind_addr = "0.0.0.0";
    CHECK_THROWS_WITH_AS(connect(r),
                         "rank 0: RINGLAB_BIND_ADDR=0.0.0.0 is 0.0.0.0, off loopback: it opens "
                         "this job to other machines, and the job has no token: export the same "
                         "RINGLAB_JOB_TOKEN=<secret> to every rank (e.g. $(openssl rand -hex 32)), "
                         "or leave RINGLAB_BIND_ADDR unset to stay on loopback",
                         std::invalid_argument);
    r.job_token = "a token";
    auto transport = connect(r);
    CHECK(transport->size() == 1);
  }

}  // TEST_SUITE
