// The nccl_rules transport (transport/nccl_rules/nccl_rules.hpp) beyond the
// conformance suite: the rules it exists for, each shown by a program that
// passes on inproc and breaks here as it would on NCCL; the end-of-collective
// check (primitives/comm.hpp, rule 4); and `--backend nccl_rules` in
// `ringlab lesson`, `tour`, `bench` and `lesson support`, against the
// articles' printouts.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "article_outputs.hpp"
#include "lessons/canonical.hpp"
#include "primitives/comm.hpp"
#include "run_program.hpp"
#include "transport/inproc.hpp"
#include "transport/nccl_rules/nccl_rules.hpp"

using namespace ringlab;
using namespace std::chrono_literals;
using ringlab::testing::run_ringlab;

namespace {

ConstBytes bytes_of(const int& value) { return std::as_bytes(std::span(&value, 1)); }
MutBytes bytes_of(int& value) { return std::as_writable_bytes(std::span(&value, 1)); }

// Rank 0 sends 7 (tag 1) then 8 (tag 2); rank 1 receives tag 2 first, then
// tag 1. Returns what rank 1's receives of tag 2 and tag 1 got.
std::pair<int, int> crossed_tags(void (*world)(int, const std::function<void(Transport&)>&,
                                               Duration)) {
  int got_2 = -1, got_1 = -1;
  world(
      2,
      [&](Transport& t) {
        if (t.rank() == 0) {
          const int seven = 7, eight = 8;
          auto a = t.isend(1, 1, bytes_of(seven));
          auto b = t.isend(1, 2, bytes_of(eight));
          a->wait(t.timeout());
          b->wait(t.timeout());
        } else {
          auto second = t.irecv(0, 2, bytes_of(got_2));
          auto first = t.irecv(0, 1, bytes_of(got_1));
          second->wait(t.timeout());
          first->wait(t.timeout());
        }
      },
      10s);
  return {got_2, got_1};
}

std::string thrown_by(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("messages between two ranks meet in posting order: tags play no part") {
  // inproc matches by tag; NCCL, and nccl_rules, by order.
  CHECK(crossed_tags(run_world) == std::pair{8, 7});
  CHECK(crossed_tags(run_nccl_rules_world) == std::pair{7, 8});
}

TEST_CASE("nothing moves until its rank launches its queue, by a wait or a test") {
  std::atomic<bool> launched{false};
  bool early = false;
  run_nccl_rules_world(
      2,
      [&](Transport& t) {
        if (t.rank() == 0) {
          const int value = 5;
          auto send = t.isend(1, 0, bytes_of(value));
          std::this_thread::sleep_for(150ms);  // posted, not launched
          launched = true;
          send->wait(t.timeout());
          return;
        }
        int got = -1;
        auto recv = t.irecv(0, 0, bytes_of(got));
        while (!recv->test()) std::this_thread::sleep_for(1ms);
        early = !launched;
        CHECK(got == 5);
      },
      10s);
  CHECK_FALSE(early);
}

TEST_CASE("a receive of another size than its matched send fails, naming both ranks") {
  std::string error;
  run_nccl_rules_world(
      2,
      [&](Transport& t) {
        if (t.rank() == 0) {
          const int value = 1;
          t.send(1, 3, bytes_of(value));  // the send itself completes
          return;
        }
        std::byte two[8];
        error = thrown_by([&] { t.recv(0, 3, two); });
      },
      10s);
  CHECK(error.find("rank 1 expected 8 bytes from rank 0 (tag 3) but the message has 4 bytes") !=
        std::string::npos);
}

TEST_CASE("a rank that leaves while another waits for it is reported at once") {
  const auto start = std::chrono::steady_clock::now();
  const std::string error = thrown_by([] {
    run_nccl_rules_world(
        2,
        [](Transport& t) {
          if (t.rank() == 1) {
            int got = 0;
            t.recv(0, 9, bytes_of(got));  // rank 0 never sends
          }
        },
        20s);
  });
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  INFO(error);
  CHECK(error.find("deadlock") != std::string::npos);
  CHECK(error.find("rank 1 waits for its receive from rank 0 (tag 9)") != std::string::npos);
  CHECK(error.find("rank 0 has left, having launched 0 sends to rank 1") != std::string::npos);
}

TEST_CASE("a collective that returns with a request it did not wait for fails, naming itself") {
  for (auto* world : {&run_world, &run_nccl_rules_world}) {
    std::vector<std::string> errors(2);
    (*world)(
        2,
        [&](Transport& t) {
          Comm comm(t, 5);
          const int value = t.rank();
          int got = -1;
          auto recv = comm.irecv(1 - t.rank(), {bytes_of(got).data(), 1, DType::Int32}, 3);
          auto send = comm.isend(1 - t.rank(),
                                 {const_cast<std::byte*>(bytes_of(value).data()), 1, DType::Int32},
                                 3);
          comm.wait(*recv);
          // The send is left unwaited.
          errors[static_cast<std::size_t>(t.rank())] =
              thrown_by([&] { comm.check_finished("all_gather", "leaky"); });
          comm.wait(*send);
          CHECK(thrown_by([&] { comm.check_finished("all_gather", "leaky"); }).empty());
        },
        10s);
    for (int rank : {0, 1}) {
      const std::string& error = errors[static_cast<std::size_t>(rank)];
      INFO(error);
      CHECK(error.find("rank " + std::to_string(rank) + ": all_gather (leaky) returned with "
                       "requests it did not finish: a send to rank " +
                       std::to_string(1 - rank) + " (collective #5 step 3) was never waited for") !=
            std::string::npos);
    }
  }
}

TEST_CASE("every article lesson on --backend nccl_rules prints what the article prints") {
  for (const auto& article : ringlab::testing::article_outputs()) {
    CAPTURE(article.lesson);
    const auto run = run_ringlab("lesson " + std::string(article.lesson) + " --backend nccl_rules");
    INFO(run.output);
    CHECK(run.status == 0);
    CHECK(ringlab::lessons::canonicalize(run.output) == article.canonical);
  }
}

TEST_CASE("the tour, the training lessons and lesson support run on nccl_rules") {
  auto run = run_ringlab("tour --backend nccl_rules");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("deadlock") == std::string::npos);
  run = run_ringlab("lesson support");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("ringlab nccl_rules") != std::string::npos);
  CHECK(run.output.find("ringlab nccl_rules, ") == std::string::npos);  // no failed cell
}

TEST_CASE("ringlab bench --backend nccl_rules: every op, no wrong element") {
  for (const char* op : {"all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter",
                         "all_to_all", "gather", "scatter", "sendrecv"}) {
    CAPTURE(op);
    const auto run = run_ringlab(std::string("bench --backend nccl_rules -n 5 --op ") + op +
                                 " --sizes 4K:1M --warmup 1 --iters 2");
    INFO(run.output);
    REQUIRE(run.status == 0);
    int rows = 0;
    std::istringstream lines(run.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.empty() || line[0] == '#') continue;
      ++rows;
      std::istringstream fields(line);
      std::string field, last;
      while (fields >> field) last = field;
      CHECK(last == "0");
    }
    CHECK(rows == 9);
  }
}

TEST_CASE("a world of many more rank threads than processors gives the closed form") {
  // 300 ranks: more than 16 per processor on up to 18 processors, so the
  // waits yield before they sleep (rules_state.hpp). Rank r holds
  // [1 + 2r, 2 + 2r], so every rank ends with [P^2, P^2 + P].
  const auto run = run_ringlab("lesson all_reduce --backend nccl_rules -n 300");
  INFO(run.output.substr(0, 2000));
  REQUIRE(run.status == 0);
  int after = 0;
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("after reudce", 0) != 0) continue;
    ++after;
    CHECK(line.find("has data  tensor([90000, 90300])") != std::string::npos);
  }
  CHECK(after == 300);
}
