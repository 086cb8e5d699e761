// A job without a token (issue 33, item 1 and its lesser items). Its store
// may authenticate nobody (torch's TCPStore listens on every interface), so
// whoever reaches it can rewrite what the ranks read there. Such a job's
// ranks listen on loopback only and connect only to loopback, whatever
// address the store names; what they find there that is not what a rank
// wrote is said as such, by the rank that found it; an error from the store
// names the rank that met it. tests/netns_store_steering.sh plays the whole
// attack from another host; here the store's answers are rewritten in place
// (SteeredStore), as the stranger's writes would make them.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "test_tcp_util.hpp"

using namespace ringlab;
using namespace ringlab::tcp;
using namespace ringlab::tcp::testing;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// Another store as a stranger who writes to it would leave it: get(key)
// answers steer(key) where that has a value (or throws where it throws).
class SteeredStore final : public store::Store {
 public:
  using Steer = std::function<std::optional<std::string>(const std::string& key)>;
  SteeredStore(std::shared_ptr<store::Store> inner, Steer steer)
      : inner_(std::move(inner)), steer_(std::move(steer)) {}

  std::string address() const override { return inner_->address(); }
  Duration timeout() const override { return inner_->timeout(); }
  void set_timeout(Duration timeout) override { inner_->set_timeout(timeout); }
  using Store::get;
  using Store::wait;
  void set(const std::string& key, std::string_view value) override { inner_->set(key, value); }
  std::string get(const std::string& key, Duration timeout) override {
    const std::string value = inner_->get(key, timeout);
    const std::optional<std::string> steered = steer_(key);
    return steered ? *steered : value;
  }
  std::int64_t add(const std::string& key, std::int64_t delta) override {
    return inner_->add(key, delta);
  }
  void wait(const std::vector<std::string>& keys, Duration timeout) override {
    inner_->wait(keys, timeout);
  }
  bool check(const std::vector<std::string>& keys) override { return inner_->check(keys); }
  std::string compare_set(const std::string& key, std::string_view expected,
                          std::string_view desired) override {
    return inner_->compare_set(key, expected, desired);
  }
  bool delete_key(const std::string& key) override { return inner_->delete_key(key); }
  std::int64_t num_keys() override { return inner_->num_keys(); }

 private:
  std::shared_ptr<store::Store> inner_;
  Steer steer_;
};

// A world of 2 without a token, each rank reading ringlab's store through
// steer. Where rank0_hosts, rank 0 hosts the store as connect() does;
// otherwise the store is hosted here, for the whole run, and rank 0 reads
// it through steer too. errors[r]: rank r's error ("" if it connected);
// took[r]: how long its connect took.
struct SteeredRun {
  std::vector<std::string> errors;
  std::vector<Clock::duration> took;
};

SteeredRun steered_world(const SteeredStore::Steer& steer, Duration timeout,
                         bool rank0_hosts = true) {
  const int port = free_port();
  std::unique_ptr<store::StoreServer> server;
  if (!rank0_hosts) server = std::make_unique<store::StoreServer>("127.0.0.1", port, 300ms);
  SteeredRun run;
  run.took.resize(2);
  run.errors = run_rank_threads(2, [&](int rank) {
    const auto start = Clock::now();
    struct Stopwatch {
      Clock::time_point start;
      Clock::duration& took;
      ~Stopwatch() { took = Clock::now() - start; }
    } stopwatch{start, run.took[static_cast<std::size_t>(rank)]};
    WorldSpec r = local_rendezvous(2, rank, port, timeout);
    if (rank == 0 && rank0_hosts) {
      connect(r);
      return;
    }
    auto client = std::make_shared<store::StoreClient>(r.master_addr, r.master_port, r.timeout);
    connect(r, std::make_shared<SteeredStore>(client, steer));
  });
  return run;
}

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace

TEST_SUITE("tcp_open_job") {
  TEST_CASE("a rank without a token connects to no address off loopback that the store names") {
    // 192.0.2.77: TEST-NET-1, routed nowhere; in its IPv4-mapped IPv6 form
    // too. Before, rank 1 tried to connect there until its timeout (and,
    // where a stranger listened there, joined the stranger's job).
    for (const std::string address : {"192.0.2.77:9", "[::ffff:192.0.2.77]:9"}) {
      CAPTURE(address);
      const SteeredRun run = steered_world(
          [&](const std::string& key) -> std::optional<std::string> {
            if (key == "ringlab/tcp/addr/0") return address;
            return std::nullopt;
          },
          3s);
      const std::string& rank1 = run.errors[1];
      INFO(rank1);
      CHECK(rank1.rfind("rank 1: the store names " + address +
                            " as rank 0's address, which is not on loopback",
                        0) == 0);
      CHECK(has(rank1, "RINGLAB_JOB_TOKEN"));
      CHECK(run.took[1] < 1500ms);  // at once, not at the end of its 3 s
      CHECK(!run.errors[0].empty());  // rank 1 never came
    }
  }

  TEST_CASE("a loopback address the store names is still followed") {
    // The check is on where an address is, not on its spelling: rank 0
    // publishes 127.0.0.1:P; the store answers localhost:P.
    const int port = free_port();
    std::string published;
    const auto errors = run_rank_threads(2, [&](int rank) {
      WorldSpec r = local_rendezvous(2, rank, port, 5s);
      if (rank == 0) {
        connect(r);
        return;
      }
      auto client = std::make_shared<store::StoreClient>(r.master_addr, r.master_port, r.timeout);
      connect(r, std::make_shared<SteeredStore>(
                     client, [&](const std::string& key) -> std::optional<std::string> {
                       if (key != "ringlab/tcp/addr/0") return std::nullopt;
                       published = client->get(key);
                       return "localhost" + published.substr(published.rfind(':'));
                     }));
    });
    CHECK(first_error(errors) == "");
    CHECK(published.rfind("127.0.0.1:", 0) == 0);
  }

  TEST_CASE("a rank that reads back another job than the one it wrote says so, naming itself once") {
    // Before: "rank 0 has WORLD_SIZE=2 but rank 0 has WORLD_SIZE=0".
    const auto errors = steered_world(
        [](const std::string& key) -> std::optional<std::string> {
          if (key == "ringlab/tcp/job") return std::string("garbage");
          return std::nullopt;
        },
        2s, false).errors;
    INFO(errors[0]);
    CHECK(errors[0].rfind("rank 0: ", 0) == 0);
    CHECK(has(errors[0], "the store's ringlab/tcp/job holds 'garbage'"));
    CHECK(!has(errors[0], "but rank 0 has WORLD_SIZE"));
    INFO(errors[1]);
    CHECK(errors[1].rfind("rank 1: ", 0) == 0);
    CHECK(has(errors[1], "the store's ringlab/tcp/job holds 'garbage'"));
  }

  TEST_CASE("an error of the store itself names the rank that met it") {
    // A c10d store's timeout says which keys, not which rank asked.
    const auto errors = steered_world(
        [](const std::string& key) -> std::optional<std::string> {
          if (key == "ringlab/tcp/addr/0")
            throw TimeoutError("timed out after 5 ms waiting for /ringlab/tcp/addr/0");
          return std::nullopt;
        },
        2s).errors;
    INFO(errors[1]);
    CHECK(errors[1].rfind("rank 1: timed out after 5 ms waiting for /ringlab/tcp/addr/0", 0) == 0);
  }

  TEST_CASE("RINGLAB_BIND_ADDR=localhost is loopback: the job runs without a token") {
    // Before: "RINGLAB_BIND_ADDR=localhost opens this job to other machines".
    const auto errors =
        run_tcp(2, [](TcpTransport& t) { CHECK(t.size() == 2); }, 10s,
                [](WorldSpec& r) { r.bind_addr = "localhost"; });
    CHECK(first_error(errors) == "");
  }

  TEST_CASE("a bind address off loopback without a token is refused, saying where it is") {
    // 0.0.0.0 is every interface; 192.0.2.1 is no address of this host,
    // refused before anything tries to listen there.
    for (const std::string bind : {"0.0.0.0", "192.0.2.1"}) {
      CAPTURE(bind);
      const auto errors = run_tcp(2, [](TcpTransport&) {}, 2s,
                                  [&](WorldSpec& r) { r.bind_addr = bind; });
      for (const std::string& error : errors) {
        INFO(error);
        CHECK(has(error, "RINGLAB_BIND_ADDR=" + bind + " is " + bind +
                             ", off loopback: it opens this job to other machines"));
      }
    }
  }

  TEST_CASE("a rank without a token refuses a MASTER_ADDR off loopback at once, as rank 0 does") {
    // Before, rank 1 waited for the store there until its timeout, then
    // asked "is rank 0 running?", when rank 0 had refused to start.
    const auto start = Clock::now();
    const auto errors = run_tcp(2, [](TcpTransport&) {}, 4s,
                                [](WorldSpec& r) { r.master_addr = "192.0.2.1"; });
    REQUIRE(errors.size() == 2);
    INFO(errors[1]);
    CHECK(has(errors[0], "MASTER_ADDR=192.0.2.1 is 192.0.2.1, off loopback"));
    CHECK(errors[1].rfind("rank 1: MASTER_ADDR=192.0.2.1 is 192.0.2.1, off loopback", 0) == 0);
    CHECK(has(errors[1], "rank 0 refuses it too"));
    CHECK(!has(errors[1], "is rank 0 running"));
    CHECK(Clock::now() - start < 3s);
  }

  TEST_CASE("with a token, a rank that cannot reach a MASTER_ADDR off loopback says rank 0 refuses it") {
    // A rank 0 bound to loopback refuses such a MASTER_ADDR whatever its
    // token; rank 1 cannot know rank 0's bind, but says what its own shows.
    const auto errors = run_tcp(2, [](TcpTransport&) {}, 1s, [](WorldSpec& r) {
      r.master_addr = "192.0.2.1";
      r.job_token = "s3cret";
    });
    INFO(errors[1]);
    CHECK(has(errors[0], "MASTER_ADDR=192.0.2.1 is 192.0.2.1, off loopback"));
    CHECK(has(errors[1], "(a rank 0 that binds to loopback, as this rank does (RINGLAB_BIND_ADDR="
                         "127.0.0.1), refuses MASTER_ADDR=192.0.2.1, which is 192.0.2.1, off "
                         "loopback: see rank 0's error)"));
  }
}
