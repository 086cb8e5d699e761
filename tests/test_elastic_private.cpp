// Elastic jobs are private by default (issue "Hardening, part 2", item 1).
// A stranger on this machine who reaches the agents' store, as the issue's
// attacker did (a store client with no token), tries its four attacks:
//   - close the job;
//   - pose as a joining node, so that the job restarts for nothing;
//   - write garbage state, so that the agent gives up;
//   - keep a killed node in the round with spoofed heartbeats.
// Each is refused: the store serves only those who prove they know the job's
// secret, and the job goes on as if nothing happened. A job of several
// nodes without a secret does not start; one run open on purpose
// (--rdzv-conf open=true) says so, and a stranger can close it.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "background_process.hpp"
#include "launcher/token_file.hpp"
#include "launcher/launcher.hpp"
#include "launcher/rendezvous_state.hpp"
#include "quick_elastic.hpp"
#include "run_program.hpp"
#include "store/store.hpp"

namespace {

using namespace std::chrono_literals;
using ringlab::launch::RendezvousState;
using ringlab::testing::BackgroundProcess;
using ringlab::testing::kCleanEnvironment;
using ringlab::testing::kQuickElastic;
using ringlab::testing::kSharedSecret;
using ringlab::testing::left_running;
using ringlab::testing::TemporaryFolder;

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// Where a job's agents meet, from its host's first line: "hosting the
// rendezvous store at 127.0.0.1:PORT for run 'ID'".
struct JobAddress {
  std::string host;
  int port = 0;
  std::string run;
  std::string key(const std::string& name) const { return "ringlab/elastic/" + run + "/" + name; }
};

JobAddress job_address(const std::string& output) {
  static const std::regex hosting(R"(hosting the rendezvous store at ([0-9.]+):(\d+) for run '([^']+)')");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(output, m, hosting), output);
  return {m[1], std::stoi(m[2]), m[3]};
}

// The stranger: a store client with `token` (none, or a guess). Returns why
// the store would not serve it, or "" when the attack went through.
std::string attack(const JobAddress& job,
                   const std::function<void(ringlab::store::StoreClient&)>& act,
                   const std::string& token = "") {
  try {
    ringlab::store::StoreClient store(job.host, job.port, std::chrono::seconds(3), token);
    act(store);
    return "";
  } catch (const ringlab::store::WrongStoreError& e) {
    return e.what();
  }
}

// Changes the shared rendezvous state with compare-and-set, as an agent does.
void change_state(ringlab::store::StoreClient& store, const std::string& key,
                  const std::function<void(RendezvousState&)>& change) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string before = store.get(key);
    RendezvousState state = ringlab::launch::state_from_json(before);
    change(state);
    const std::string after = ringlab::launch::to_json(state);
    if (store.compare_set(key, before, after) == after) return;
  }
  FAIL("the state changed 100 times under the attack");
}

// A --standalone job (the issue's other example) whose one worker sleeps
// `seconds`, watched until its round runs.
std::string standalone_job(const TemporaryFolder& dir, int seconds, int max_restarts = 0) {
  return kCleanEnvironment + RINGLAB_EXE + " run --standalone --nproc-per-node 1 --max-restarts " +
         std::to_string(max_restarts) + " " + kQuickElastic + " -- sh -c 'sleep " +
         std::to_string(seconds) + "' " + dir.path;
}

// The store proved nothing to the stranger: it does not know the job's secret.
void check_refused(const std::string& refused) {
  INFO(refused);
  CHECK(!refused.empty());
  CHECK(refused.find("does not know this rank's job token") != std::string::npos);
}

}  // namespace

TEST_CASE("a stranger cannot close a --standalone job") {
  TemporaryFolder dir;
  BackgroundProcess job(standalone_job(dir, 3), dir.path + "/job.out");
  REQUIRE_MESSAGE(job.wait_for("round 0: 1 node", 10s), job.output());
  const JobAddress address = job_address(job.output());
  check_refused(attack(address, [&](ringlab::store::StoreClient& store) {
    change_state(store, address.key("state"), [](RendezvousState& state) {
      state.closed = true;
      state.closed_reason = "closed by a stranger";
    });
  }));
  // A guessed token is refused the same way.
  check_refused(attack(
      address, [&](ringlab::store::StoreClient& store) { store.get(address.key("state")); },
      "0123456789abcdef0123456789abcdef"));
  CHECK(job.wait_exit(20s) == 0);
  INFO(job.output());
  CHECK(job.output().find("closed by a stranger") == std::string::npos);
  CHECK(job.output().find("every node's workers finished") != std::string::npos);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("a stranger cannot pose as a joining node and use up the restarts") {
  TemporaryFolder dir;
  BackgroundProcess job(standalone_job(dir, 3, 1), dir.path + "/job.out");
  REQUIRE_MESSAGE(job.wait_for("round 0: 1 node", 10s), job.output());
  const JobAddress address = job_address(job.output());
  // Twice: each wait-list entry would cost the job a restart.
  for (int pose = 0; pose < 2; ++pose) {
    check_refused(attack(address, [&](ringlab::store::StoreClient& store) {
      const int id = static_cast<int>(store.add(address.key("nodes"), 1));
      change_state(store, address.key("state"), [&](RendezvousState& state) {
        state.wait_list.push_back({id, "stranger", 1, "127.0.0.1", 1});
        state.last_change = "node " + std::to_string(id) + " (stranger, pid 1) wants to join";
      });
    }));
    std::this_thread::sleep_for(500ms);
  }
  CHECK(job.wait_exit(20s) == 0);
  INFO(job.output());
  CHECK(job.output().find("stranger") == std::string::npos);
  CHECK(job.output().find("restart 1") == std::string::npos);
}

TEST_CASE("a stranger cannot write garbage state and make the agent give up") {
  TemporaryFolder dir;
  BackgroundProcess job(standalone_job(dir, 3), dir.path + "/job.out");
  REQUIRE_MESSAGE(job.wait_for("round 0: 1 node", 10s), job.output());
  const JobAddress address = job_address(job.output());
  check_refused(attack(address, [&](ringlab::store::StoreClient& store) {
    store.set(address.key("state"), "garbage");
  }));
  CHECK(job.wait_exit(20s) == 0);
  INFO(job.output());
  CHECK(job.output().find("corrupt") == std::string::npos);
}

TEST_CASE(
    "spoofed heartbeats cannot keep a killed node in the round; a job of several nodes needs a "
    "secret") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string command = std::string(RINGLAB_EXE) +
                              " run --nnodes=1:2 --nproc_per_node=1 --max_restarts=3 --rdzv_id=1 "
                              "--rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:" +
                              std::to_string(port) + " " + kQuickElastic + " -- sh -c 'sleep 1000' " +
                              dir.path;
  // Without a secret the job does not start: it would be open to anyone who
  // reaches the endpoint.
  // (The program would run for a second there, were the job to start.)
  std::string quick = command;
  quick.replace(quick.find("sleep 1000"), 10, "sleep 1");
  const auto open = ringlab::testing::run_shell(kCleanEnvironment + quick);
  CHECK(open.status == 1);
  CHECK(open.output.find("--nnodes 1:2 lets other nodes join, and they must share a secret") !=
        std::string::npos);
  CHECK(open.output.find("export the same RINGLAB_JOB_TOKEN=<secret> on every node") !=
        std::string::npos);
  CHECK(open.output.find("hosting") == std::string::npos);

  // With one, node B joins node A; B's agent is killed, and a stranger beats
  // B's heartbeat counter: A takes B out all the same.
  BackgroundProcess a(kCleanEnvironment + kSharedSecret + command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("round 0: 1 node", 10s), a.output());
  BackgroundProcess b(kCleanEnvironment + kSharedSecret + command, dir.path + "/b.out");
  REQUIRE_MESSAGE(a.wait_for("round 1: 2 nodes", 15s), (a.output() + b.output()));
  const JobAddress address = job_address(a.output());
  b.signal(SIGKILL);
  CHECK(b.wait_exit(10s) == 128 + 9);
  std::atomic<bool> stop{false};
  std::string refused;
  std::thread stranger([&] {
    refused = attack(address, [&](ringlab::store::StoreClient& store) {
      while (!stop) {
        store.add(address.key("hb/2"), 1);
        std::this_thread::sleep_for(50ms);
      }
    });
  });
  const bool taken_out = a.wait_for("stopped sending heartbeats", 10s);
  stop = true;
  stranger.join();
  check_refused(refused);
  INFO(a.output());
  CHECK(taken_out);
  CHECK(a.wait_for("round 2: 1 node", 10s));
  a.signal(SIGTERM);
  CHECK(a.wait_exit(20s) == 128 + 15);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("every node gives the secret of --rdzv-conf token_file, and its workers get it") {
  TemporaryFolder dir;
  const std::string secret = "9d1c4e0b7a2f58c3e6b1d0a4f7c2e9b8";
  const std::string file = dir.path + "/job.token";
  { std::ofstream(file) << secret << "\n"; }
  ::chmod(file.c_str(), 0600);
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const auto node = [&](const std::string& token_file) {
    return kCleanEnvironment + RINGLAB_EXE + " run --nnodes 2:2 --nproc-per-node 1 --rdzv-id tf " +
           "--rdzv-endpoint 127.0.0.1:" + std::to_string(port) + " " +
           ringlab::testing::quick_elastic_with("token_file=" + token_file) + " -- sh -c 'echo \"token=$RINGLAB_JOB_TOKEN\"' " +
           dir.path;
  };
  BackgroundProcess a(node(file), dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("hosting the rendezvous store", 10s), a.output());
  // A node with another secret is refused, and the job does not notice.
  const std::string other = dir.path + "/other.token";
  { std::ofstream(other) << "not-the-secret\n"; }
  ::chmod(other.c_str(), 0600);
  const auto stranger = ringlab::testing::run_shell(node(other));
  CHECK(stranger.status == 1);
  CHECK(stranger.output.find("the rendezvous store at 127.0.0.1:" + std::to_string(port) +
                             " is not this job's") != std::string::npos);
  BackgroundProcess b(node(file), dir.path + "/b.out");
  CHECK(a.wait_exit(30s) == 0);
  CHECK(b.wait_exit(30s) == 0);
  INFO((a.output() + b.output()));
  CHECK(a.output().find("token=" + secret + "\n") != std::string::npos);
  CHECK(b.output().find("token=" + secret + "\n") != std::string::npos);
  CHECK(a.output().find("restart 1") == std::string::npos);
}

TEST_CASE("a secret that is not one is refused before anything starts") {
  TemporaryFolder dir;
  const auto refused = [&](const std::string& environment, const std::string& conf,
                           const std::string& says) {
    const auto run = ringlab::testing::run_shell(
        kCleanEnvironment + environment + RINGLAB_EXE +
        " run --nnodes 1:2 --rdzv-endpoint 127.0.0.1:9 --rdzv-conf " + conf + " -- true");
    INFO(conf);
    INFO(run.output);
    CHECK(run.status == 1);
    CHECK(run.output.find(says) != std::string::npos);
    CHECK(run.output.find("hosting") == std::string::npos);
  };
  const std::string loose = dir.path + "/loose.token";
  { std::ofstream(loose) << "secret\n"; }
  ::chmod(loose.c_str(), 0644);
  refused("", "token_file=" + loose,
          "other users may read or change it (mode 0644); a secret must be yours alone: chmod 600");
  const std::string empty = dir.path + "/empty.token";
  { std::ofstream(empty) << "\n"; }
  ::chmod(empty.c_str(), 0600);
  refused("", "token_file=" + empty, ": the file is empty");
  refused("", "token_file=" + dir.path + "/none", ": cannot open it (No such file or directory)");
  refused("", "token_file=" + dir.path, ": not a regular file");
  refused("", "token_file=/dev/zero", ": not a regular file");
  refused(kSharedSecret, "open=true",
          "--rdzv-conf open=true, but this node was given the job's secret (RINGLAB_JOB_TOKEN)");
  const std::string good = dir.path + "/good.token";
  { std::ofstream(good) << "another\n"; }
  ::chmod(good.c_str(), 0600);
  refused(kSharedSecret, "token_file=" + good,
          "RINGLAB_JOB_TOKEN and --rdzv-conf token_file=" + good + " hold different secrets");
}

// What read_token_file says about path ("" if it takes it).
std::string token_file_refusal(const std::string& path) {
  try {
    ringlab::launch::read_token_file(path);
    return "";
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
}

TEST_CASE("a token file another user owns, or that others could replace, is refused as ssh does") {
  // Issue 33, item 4: a stranger pre-creates job.token in a shared folder,
  // the operator writes the secret into it, and the stranger, who owns it,
  // reads it. Only the mode was checked (0600 passed). Making files of
  // another user takes root, as the tests run.
  if (::geteuid() != 0) {
    MESSAGE("skipped: making another user's files needs root");
    return;
  }
  constexpr uid_t kStranger = 65534;  // nobody
  TemporaryFolder dir;
  const std::string secret = "4f1e9c2b7d";
  const auto write_token = [&](const std::string& path, uid_t owner) {
    { std::ofstream(path) << secret << "\n"; }
    ::chmod(path.c_str(), 0600);
    REQUIRE(::chown(path.c_str(), owner, ::getegid()) == 0);
  };
  const auto folder = [&](const std::string& name, mode_t mode, uid_t owner) {
    const std::string path = dir.path + "/" + name;
    REQUIRE(::mkdir(path.c_str(), 0700) == 0);
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    REQUIRE(::chown(path.c_str(), owner, ::getegid()) == 0);
    return path;
  };

  // The stranger's file, mode 0600, in a folder everyone may write (sticky,
  // as /tmp): refused, naming its owner.
  const std::string shared = folder("shared", 01777, ::geteuid());
  write_token(shared + "/job.token", kStranger);
  std::string said = token_file_refusal(shared + "/job.token");
  INFO("read_token_file said: " << said);
  CHECK(said.find("it belongs to nobody (uid 65534), not to root (uid 0), who runs ringlab") != std::string::npos);
  CHECK(said.find("rm " + shared + "/job.token") != std::string::npos);

  // The operator's own file there is taken: the sticky bit keeps others
  // from replacing it.
  write_token(shared + "/mine.token", ::geteuid());
  CHECK(token_file_refusal(shared + "/mine.token") == "");
  CHECK(ringlab::launch::read_token_file(shared + "/mine.token") == secret);

  // A folder others may write without the sticky bit: they could replace
  // the file with one of their own.
  const std::string open = folder("open", 0777, ::geteuid());
  write_token(open + "/job.token", ::geteuid());
  said = token_file_refusal(open + "/job.token");
  CHECK(said.find("the folder " + open + " can be written by other users (mode 0777) and has no "
                  "sticky bit") != std::string::npos);

  // A folder of another user (not root): its owner may rename anything in it.
  const std::string theirs = folder("theirs", 0755, kStranger);
  write_token(theirs + "/job.token", ::geteuid());
  said = token_file_refusal(theirs + "/job.token");
  CHECK(said.find("the folder " + theirs + " belongs to nobody (uid 65534)") != std::string::npos);

  // Every folder up the path counts: a private folder inside the open one.
  const std::string inner = open + "/inner";
  REQUIRE(::mkdir(inner.c_str(), 0700) == 0);
  write_token(inner + "/job.token", ::geteuid());
  said = token_file_refusal(inner + "/job.token");
  CHECK(said.find("the folder " + open + " can be written by other users") != std::string::npos);

  // And through the command line, before anything starts.
  const auto run = ringlab::testing::run_shell(
      kCleanEnvironment + RINGLAB_EXE + " run --nnodes 1:2 --rdzv-endpoint 127.0.0.1:9 " +
      "--rdzv-conf token_file=" + shared + "/job.token -- true");
  INFO(run.output);
  CHECK(run.status == 1);
  CHECK(run.output.find("it belongs to nobody (uid 65534)") != std::string::npos);
  CHECK(run.output.find("hosting") == std::string::npos);
}

TEST_CASE("a job run open on purpose says so once, and a stranger can close it") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  BackgroundProcess job(kCleanEnvironment + RINGLAB_EXE +
                            " run --nnodes 1:2 --nproc-per-node 1 --rdzv-id open "
                            "--rdzv-endpoint 127.0.0.1:" +
                            std::to_string(port) + " " +
                            ringlab::testing::quick_elastic_with("open=true") + " -- sh -c 'sleep 1000' " +
                            dir.path,
                        dir.path + "/job.out");
  REQUIRE_MESSAGE(job.wait_for("round 0: 1 node", 10s), job.output());
  const std::string line = "ringlab run [node 1]: this job is open (--rdzv-conf open=true): anyone "
                           "who reaches 127.0.0.1:" +
                           std::to_string(port) + " can join it, close it or change its state\n";
  const JobAddress address = job_address(job.output());
  CHECK(attack(address, [&](ringlab::store::StoreClient& store) {
          change_state(store, address.key("state"), [](RendezvousState& state) {
            state.closed = true;
            state.closed_reason = "closed by a stranger";
          });
        }) == "");
  CHECK(job.wait_exit(20s) == 1);
  const std::string out = job.output();
  INFO(out);
  CHECK(out.find(line) != std::string::npos);
  CHECK(out.find(line) == out.rfind(line));
  CHECK(out.find("the job ended: closed by a stranger") != std::string::npos);
}

TEST_CASE("the workers of an open job's round on two nodes say what a token is for, truly") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string command = kCleanEnvironment + RINGLAB_EXE +
                              " run --nnodes 2:2 --nproc-per-node 1 --rdzv-id open2 "
                              "--rdzv-endpoint 127.0.0.1:" +
                              std::to_string(port) + " " +
                              ringlab::testing::quick_elastic_with("open=true") + " -- " +
                              ELASTIC_WORKER_EXE + " --steps 2 --counter " + dir.path + "/counter";
  BackgroundProcess a(command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("hosting the rendezvous store", 10s), a.output());
  BackgroundProcess b(command, dir.path + "/b.out");
  CHECK(a.wait_exit(30s) == 0);
  CHECK(b.wait_exit(30s) == 0);
  const std::string out = a.output() + b.output();
  INFO(out);
  CHECK(out.find("rank 0: this job has no token (RINGLAB_JOB_TOKEN is not set)") !=
        std::string::npos);
  CHECK(out.find("ringlab run gives its ranks one") == std::string::npos);
  CHECK(out.find("an open elastic job (--rdzv-conf open=true) has none") != std::string::npos);
}
