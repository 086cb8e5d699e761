// Issue 11's "Multi-node, for real", with the real lesson, on loopback: two
// elastic agents started with the article's options, exactly as it writes
// them, run `ringlab lesson train_elastic`:
//   1. node A starts alone (--nnodes=1:3 --nproc_per_node=2): world size 2;
//   2. after a few epochs node B starts the same command: both restart with
//      world size 4, node B's workers are ranks 2-3, and all four resume from
//      the checkpoint's epoch;
//   3. node B's agent is killed: node A goes on alone with world size 2;
//   4. node A's rank 1 is killed until --max-restarts is used up: the job
//      ends with the report of its failure.
// Each round resumes at the epoch the checkpoint holds, as the article's
// program does, and the last checkpoint holds the model of a float64
// reference replaying the rounds, each at its world size. The process table
// is checked after each step. The same story in
// two network namespaces is netns_train_elastic.sh.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "background_process.hpp"
#include "launcher/launcher.hpp"
#include "quick_elastic.hpp"
#include "run_program.hpp"
#include "train_elastic_lines.hpp"
#include "training/checkpoint.hpp"

namespace {

using namespace std::chrono_literals;
using ringlab::testing::BackgroundProcess;
using ringlab::testing::check_resume;
using ringlab::testing::kCleanEnvironment;
using ringlab::testing::kQuickElastic;
using ringlab::testing::left_running;
using ringlab::testing::TemporaryFolder;
using ringlab::testing::TrainElasticLines;

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

std::string both(const BackgroundProcess& a, const BackgroundProcess& b) {
  return "--- node A ---\n" + a.output() + "--- node B ---\n" + b.output();
}

// The pids of round n of a node (counted from the given ranks' "starting"
// lines), once each of its workers has trained `epochs` epochs; {} before.
std::vector<int> round_pids(const TrainElasticLines& lines, int n, std::vector<int> ranks,
                            std::size_t epochs = 1) {
  std::vector<int> pids;
  for (int rank : ranks) {
    const int pid = lines.pid_of(rank, n);
    if (pid == 0 || lines.workers.at(pid).epochs.size() < epochs) return {};
    pids.push_back(pid);
  }
  return pids;
}

}  // namespace

TEST_CASE("seed 000 for real on loopback: a node joins, a node dies, the restarts run out") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string checkpoint = dir.path + "/checkpoint.pt";
  // The article's command, as it writes it, and the lesson.
  const std::string command =
      kCleanEnvironment + ringlab::testing::kSharedSecret + RINGLAB_EXE +
      " run --nnodes=1:3 --nproc_per_node=2 --max_restarts=3 --rdzv_id=1 --rdzv_backend=c10d "
      "--rdzv_endpoint=\"127.0.0.1:" +
      std::to_string(port) + "\" " + kQuickElastic + " " + RINGLAB_EXE +
      " lesson train_elastic --epoch-seconds 0.1 --max-epoch 100000 --checkpoint " + checkpoint;

  // 1. Node A alone: world size 2, from epoch 0.
  BackgroundProcess a(command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for(
                      [](const std::string& out) {
                        const TrainElasticLines lines(out);
                        return lines.last_epoch({lines.pid_of(0, 0)}) >= 3;
                      },
                      30s),
                  a.output());
  {
    const TrainElasticLines lines(a.output());
    INFO(a.output());
    CHECK(lines.loaded.empty());
    for (int rank = 0; rank < 2; ++rank) {
      const auto& worker = lines.workers.at(lines.pid_of(rank, 0));
      CHECK(worker.env.at("WORLD_SIZE") == "2");
      CHECK(worker.env.at("LOCAL_WORLD_SIZE") == "2");
      CHECK(worker.env.at("MASTER_ADDR") == "127.0.0.1");
      CHECK(worker.local_rank == rank);
      CHECK(worker.epochs.front() == 0);
    }
  }

  // 2. Node B starts the same command: both restart with world size 4. (Two
  // epochs each: a rank prints an epoch only after rank 0 saved the one
  // before, so the round of 4 has saved an epoch.)
  BackgroundProcess b(command, dir.path + "/b.out");
  REQUIRE_MESSAGE(a.wait_for(
                      [&](const std::string& out) {
                        return !round_pids(TrainElasticLines(out), 1, {0, 1}, 2).empty() &&
                               !round_pids(TrainElasticLines(b.output()), 0, {2, 3}, 2).empty();
                      },
                      30s),
                  both(a, b));
  std::vector<int> world4;  // the pids of the round of 4
  {
    INFO(both(a, b));
    CHECK(a.output().find("ringlab run [node 1]: node 2 (") != std::string::npos);
    CHECK(a.output().find("wants to join: stopping this node's workers") != std::string::npos);
    CHECK(a.output().find("ringlab run [node 1]: restart 1 of 3: node 2 (") != std::string::npos);
    const TrainElasticLines on_a(a.output()), on_b(b.output());
    const std::vector<int> round_a = round_pids(on_a, 1, {0, 1});
    const std::vector<int> round_b = round_pids(on_b, 0, {2, 3});
    const auto& master = on_a.workers.at(round_a.front()).env;
    for (const auto* lines : {&on_a, &on_b})
      for (const int pid : lines == &on_a ? round_a : round_b) {
        const auto& worker = lines->workers.at(pid);
        CAPTURE(worker.rank);
        CHECK(worker.env.at("WORLD_SIZE") == "4");
        CHECK(worker.env.at("LOCAL_WORLD_SIZE") == "2");
        CHECK(worker.env.at("MASTER_ADDR") == master.at("MASTER_ADDR"));
        CHECK(worker.env.at("MASTER_PORT") == master.at("MASTER_PORT"));
        CHECK(worker.local_rank == worker.rank % 2);
      }
    // Node A's round 0 had another master port: a fresh one for each round.
    CHECK(on_a.workers.at(on_a.pid_of(0, 0)).env.at("MASTER_PORT") != master.at("MASTER_PORT"));
    // Everyone loaded the checkpoint and resumed at the epoch it names.
    CHECK(on_a.loaded == std::vector<std::string>(2, checkpoint));
    CHECK(on_b.loaded == std::vector<std::string>(2, checkpoint));
    world4 = round_a;
    world4.insert(world4.end(), round_b.begin(), round_b.end());
    check_resume(TrainElasticLines(a.output() + b.output()), world4,
                 on_a.last_epoch({on_a.pid_of(0, 0), on_a.pid_of(1, 0)}));
  }

  // 3. Node B's agent is killed (its workers die with it): node A goes on
  // alone with world size 2, from the checkpoint.
  b.signal(SIGKILL);
  CHECK(b.wait_exit(10s) == 128 + 9);
  REQUIRE_MESSAGE(a.wait_for(
                      [](const std::string& out) {
                        return !round_pids(TrainElasticLines(out), 2, {0, 1}).empty();
                      },
                      30s),
                  both(a, b));
  {
    INFO(both(a, b));
    CHECK(a.output().find("ringlab run [node 1]: restart 2 of 3: ") != std::string::npos);
    const TrainElasticLines on_a(a.output());
    const std::vector<int> round = round_pids(on_a, 2, {0, 1});
    for (int pid : round) CHECK(on_a.workers.at(pid).env.at("WORLD_SIZE") == "2");
    // The round of 4 is over on both nodes: what it printed is all there.
    check_resume(on_a, round, TrainElasticLines(a.output() + b.output()).last_epoch(world4));
    // What is left running is node A's.
    for (const std::string& process : left_running(dir.path, 0ms)) {
      const bool of_a =
          process.rfind(std::to_string(a.pid()) + " ", 0) == 0 ||
          process.find("parent " + std::to_string(a.pid()) + ")") != std::string::npos;
      CHECK_MESSAGE(of_a, process);
    }
  }

  // 4. Node A's rank 1 is killed in round 2 (restart 3 of 3), and again in
  // round 3: the job ends with the report.
  for (int round = 2; round <= 3; ++round) {
    REQUIRE_MESSAGE(a.wait_for(
                        [&](const std::string& out) {
                          return !round_pids(TrainElasticLines(out), round, {0, 1}).empty();
                        },
                        30s),
                    a.output());
    const TrainElasticLines on_a(a.output());
    if (round == 3) {
      const std::vector<int> before = round_pids(on_a, 2, {0, 1});
      check_resume(on_a, round_pids(on_a, 3, {0, 1}), on_a.last_epoch(before));
    }
    ::kill(on_a.pid_of(1, round), SIGKILL);
  }
  CHECK(a.wait_exit(30s) == 128 + 9);
  const std::string out = a.output();
  INFO(out);
  CHECK(out.find("ringlab run [node 1]: restart 3 of 3: rank 1 was killed by ") !=
        std::string::npos);
  CHECK(out.find("ringlab run [node 1]: the job ended: rank 1 was killed by ") !=
        std::string::npos);
  CHECK(out.find("all 3 restarts of --max-restarts 3 are used up") != std::string::npos);
  CHECK(out.find("ringlab FAILED\n") != std::string::npos);
  CHECK(out.find("  rank      : 1 (local_rank: 1, round ") != std::string::npos);
  CHECK(out.find("(node 1, agent pid " + std::to_string(a.pid()) + ")") != std::string::npos);
  CHECK(out.find("  exitcode  : -9 (signal 9") != std::string::npos);
  CHECK(out.find("restart 4") == std::string::npos);

  // The last checkpoint holds the model of the float64 reference replaying
  // the rounds as they ran, each from the state the one before saved, with
  // its world size.
  const ringlab::training::Checkpoint last = ringlab::training::load_checkpoint(checkpoint);
  REQUIRE(last.epoch);
  const TrainElasticLines all(out + b.output());
  ringlab::testing::ReplayedRounds reference;
  reference.round(all, round_pids(all, 0, {0, 1}), 2);
  reference.round(all, world4, 4);
  for (int round = 2; round <= 3; ++round) reference.round(all, round_pids(all, round, {0, 1}), 2);
  REQUIRE(!reference.after(*last.epoch).empty());
  ringlab::testing::check_model(last, reference.after(*last.epoch).front());

  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}
