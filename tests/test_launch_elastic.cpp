// The elastic `ringlab run` for real: agents (two "nodes" on loopback) that
// grow, shrink, restart and end a job of elastic_worker ranks, the way
// torchrun does in seed 000, and that refuse bad input clearly. After every
// case the process table must hold nothing of it.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "background_process.hpp"
#include "launcher/launcher.hpp"
#include "quick_elastic.hpp"
#include "run_program.hpp"

namespace {

using namespace std::chrono_literals;
using ringlab::testing::BackgroundProcess;
using ringlab::testing::kCleanEnvironment;
using ringlab::testing::kQuickElastic;
using ringlab::testing::kSharedSecret;
using ringlab::testing::run_ringlab_with_secret;
using ringlab::testing::left_running;
using ringlab::testing::run_shell;
using ringlab::testing::TemporaryFolder;

// The article's options, as it writes them, for a job on this machine.
std::string agent_command(const std::string& folder, int port, const std::string& nnodes,
                          const std::string& extra, const std::string& worker_flags) {
  return kCleanEnvironment + kSharedSecret + RINGLAB_EXE + " run --nnodes=" + nnodes +
         " --nproc_per_node=2 --max_restarts=3 --rdzv_id=" +
         std::filesystem::path(folder).filename().string() +
         " --rdzv_backend=c10d --rdzv_endpoint=\"127.0.0.1:" + std::to_string(port) + "\" " +
         kQuickElastic + " " + extra + " " + ELASTIC_WORKER_EXE + " --counter " + folder +
         "/counter " + worker_flags;
}

// What the workers printed (elastic_worker's lines).
struct WorkerLines {
  std::map<int, std::map<std::string, std::string>> env;  // by pid
  std::map<int, long long> resumes;                       // pid -> step
  struct Step {
    int pid;
    long long step;
    int rank, world;
  };
  std::vector<Step> steps;

  explicit WorkerLines(const std::string& output) {
    static const std::regex env_line(R"(^\[(\d+)\] env (.*)$)");
    static const std::regex resume_line(R"(^\[(\d+)\] rank \d+ resumes at step (\d+)$)");
    static const std::regex step_line(R"(^\[(\d+)\] step (\d+) rank (\d+) world (\d+) sum \d+$)");
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, env_line)) {
        std::istringstream words(m[2].str());
        for (std::string word; words >> word;)
          env[std::stoi(m[1])][word.substr(0, word.find('='))] = word.substr(word.find('=') + 1);
      } else if (std::regex_match(line, m, resume_line)) {
        resumes[std::stoi(m[1])] = std::stoll(m[2]);
      } else if (std::regex_match(line, m, step_line)) {
        steps.push_back({std::stoi(m[1]), std::stoll(m[2]), std::stoi(m[3]), std::stoi(m[4])});
      }
    }
  }
  // The workers (pids) of the round whose workers got this MASTER_PORT.
  std::vector<int> round_of_port(const std::string& port) const {
    std::vector<int> pids;
    for (const auto& [pid, vars] : env)
      if (vars.at("MASTER_PORT") == port) pids.push_back(pid);
    return pids;
  }
  // pids whose variables match all of `want`.
  std::vector<int> with(const std::map<std::string, std::string>& want) const {
    std::vector<int> pids;
    for (const auto& [pid, vars] : env)
      if (std::all_of(want.begin(), want.end(), [&](const auto& w) {
            const auto it = vars.find(w.first);
            return it != vars.end() && it->second == w.second;
          }))
        pids.push_back(pid);
    return pids;
  }
  bool stepped(int pid) const {
    return std::any_of(steps.begin(), steps.end(), [&](const Step& s) { return s.pid == pid; });
  }
  long long last_step(const std::vector<int>& pids) const {
    long long last = -1;
    for (const Step& s : steps)
      if (std::find(pids.begin(), pids.end(), s.pid) != pids.end()) last = std::max(last, s.step);
    return last;
  }
};

WorkerLines lines_of(std::initializer_list<const BackgroundProcess*> agents) {
  std::string all;
  for (const BackgroundProcess* agent : agents) all += agent->output();
  return WorkerLines(all);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// A wait_for condition on node A's output: after restart 2, its two workers
// run alone (world size 2) and have both stepped.
bool alone_after_restart_2(const std::string& out) {
  const WorkerLines w(out);
  const std::vector<int> pids = w.with({{"WORLD_SIZE", "2"}, {"TORCHELASTIC_RESTART_COUNT", "2"}});
  return pids.size() == 2 && w.stepped(pids[0]) && w.stepped(pids[1]);
}

std::string both(const BackgroundProcess& a, const BackgroundProcess& b) {
  return "--- node A ---\n" + a.output() + "--- node B ---\n" + b.output();
}

// The workers of a round resume together, from the checkpoint of the last
// step the previous round finished: no step is lost, and at most the one in
// flight runs again.
void check_resume(const WorkerLines& w, const std::vector<int>& round, long long last_done) {
  REQUIRE(!round.empty());
  std::set<long long> starts;
  for (int pid : round) {
    REQUIRE(w.resumes.count(pid));
    starts.insert(w.resumes.at(pid));
  }
  CHECK(starts.size() == 1);
  CHECK(*starts.begin() >= last_done);
  CHECK(*starts.begin() <= last_done + 1);
}

}  // namespace

TEST_CASE("two nodes on loopback: one joins, one dies, then the restarts run out (seed 000)") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string command = agent_command(
      dir.path, port, "1:3", "",
      "--steps 100000 --step-ms 100 --fail-rank 1 --fail-while " + dir.path + "/fail");

  // 1. Node A alone: world size 2.
  BackgroundProcess a(command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("step 3 rank 0 world 2 ", 30s), a.output());

  // 2. Node B starts the same command: both restart with world size 4, node
  // B's workers are ranks 2-3, and everyone resumes from the checkpoint.
  const long long before_join =
      WorkerLines(a.output()).last_step(WorkerLines(a.output()).with({{"WORLD_SIZE", "2"}}));
  BackgroundProcess b(command, dir.path + "/b.out");
  const auto world4_stepping = [&] {
    const WorkerLines w = lines_of({&a, &b});
    const std::vector<int> pids = w.with({{"WORLD_SIZE", "4"}});
    return pids.size() == 4 &&
           std::all_of(pids.begin(), pids.end(), [&](int pid) { return w.stepped(pid); });
  };
  REQUIRE_MESSAGE(a.wait_for([&](const std::string&) { return world4_stepping(); }, 30s),
                  both(a, b));
  {
    INFO(both(a, b));
    CHECK(a.output().find("ringlab run [node 1]: node 2 (") != std::string::npos);
    CHECK(a.output().find("wants to join: stopping this node's workers (SIGTERM, then SIGKILL "
                          "after 1 s)") != std::string::npos);
    CHECK(a.output().find("ringlab run [node 1]: restart 1 of 3: node 2 (") != std::string::npos);
    const WorkerLines w = lines_of({&a, &b});
    const WorkerLines on_b(b.output());
    for (const std::string rank : {"2", "3"}) {
      const std::vector<int> pids = on_b.with({{"RANK", rank}, {"WORLD_SIZE", "4"}});
      REQUIRE(pids.size() == 1);
      const auto& vars = on_b.env.at(pids.front());
      CHECK(vars.at("LOCAL_RANK") == std::to_string(std::stoi(rank) - 2));
      CHECK(vars.at("GROUP_RANK") == "1");
      CHECK(vars.at("ROLE_RANK") == rank);
      CHECK(vars.at("ROLE_NAME") == "default");
      CHECK(vars.at("LOCAL_WORLD_SIZE") == "2");
      CHECK(vars.at("GROUP_WORLD_SIZE") == "2");
      CHECK(vars.at("ROLE_WORLD_SIZE") == "4");
      CHECK(vars.at("TORCHELASTIC_RESTART_COUNT") == "0");  // node B's first start
      CHECK(vars.at("TORCHELASTIC_MAX_RESTARTS") == "3");
      CHECK(vars.at("TORCHELASTIC_RUN_ID") == std::filesystem::path(dir.path).filename().string());
    }
    const std::vector<int> round = w.with({{"WORLD_SIZE", "4"}});
    std::set<std::string> ports, ranks;
    for (int pid : round) {
      ports.insert(w.env.at(pid).at("MASTER_PORT"));
      ranks.insert(w.env.at(pid).at("RANK"));
    }
    CHECK(ports.size() == 1);  // one master for the round
    CHECK(ranks == std::set<std::string>{"0", "1", "2", "3"});
    CHECK(w.with({{"WORLD_SIZE", "4"}, {"GROUP_RANK", "0"}, {"TORCHELASTIC_RESTART_COUNT", "1"}})
              .size() == 2);
    check_resume(w, round, w.last_step(w.with({{"WORLD_SIZE", "2"}})));
    CHECK(w.last_step(w.with({{"WORLD_SIZE", "2"}})) >= before_join);
  }

  // 3. Node B's agent is killed: node A goes on alone with world size 2.
  const long long world4_last =
      lines_of({&a, &b}).last_step(lines_of({&a, &b}).with({{"WORLD_SIZE", "4"}}));
  b.signal(SIGKILL);
  CHECK(b.wait_exit(10s) == 128 + 9);
  REQUIRE_MESSAGE(a.wait_for(alone_after_restart_2, 30s), both(a, b));
  {
    INFO(both(a, b));
    CHECK(a.output().find("ringlab run [node 1]: restart 2 of 3: ") != std::string::npos);
    const WorkerLines w = lines_of({&a, &b});
    const long long last_done = std::max(world4_last, w.last_step(w.with({{"WORLD_SIZE", "4"}})));
    check_resume(w, w.with({{"WORLD_SIZE", "2"}, {"TORCHELASTIC_RESTART_COUNT", "2"}}), last_done);
    // Node B's workers died with its agent: what is left is node A's.
    for (const std::string& process : left_running(dir.path, 0ms)) {
      const bool of_a =
          process.rfind(std::to_string(a.pid()) + " ", 0) == 0 ||
          process.find("parent " + std::to_string(a.pid()) + ")") != std::string::npos;
      CHECK_MESSAGE(of_a, process);
    }
  }

  // 4. A worker fails at every step from now on: the last restart goes, then
  // the job ends with the report of its first failure.
  { std::ofstream(dir.path + "/fail") << "fail\n"; }
  CHECK(a.wait_exit(30s) == 3);
  const std::string out = a.output();
  INFO(out);
  CHECK(out.find("ringlab run [node 1]: restart 3 of 3: rank 1 exited with status 3") !=
        std::string::npos);
  CHECK(out.find("ringlab run [node 1]: the job ended: rank 1 exited with status 3") !=
        std::string::npos);
  CHECK(out.find("all 3 restarts of --max-restarts 3 are used up") != std::string::npos);
  CHECK(out.find("elastic_worker FAILED\n") != std::string::npos);
  CHECK(out.find("  rank      : 1 (local_rank: 1, round ") != std::string::npos);
  CHECK(out.find("  host      : ") != std::string::npos);
  CHECK(out.find("(node 1, agent pid " + std::to_string(a.pid()) + ")") != std::string::npos);
  CHECK(out.find("  exitcode  : 3 (pid: ") != std::string::npos);
  CHECK(out.find("  error     : rank 1: failing on request at step ") != std::string::npos);
  CHECK(out.find("restart 4") == std::string::npos);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("a failure on one node restarts the group on both, which then finish together") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  { std::ofstream(dir.path + "/fail") << "once\n"; }
  const std::string command =
      agent_command(dir.path, port, "2:2", "--trace " + dir.path + "/trace-NODE.json",
                    "--steps 12 --step-ms 50 --fail-rank 3 --fail-once " + dir.path + "/fail");
  const auto for_node = [&](const std::string& node) {
    std::string c = command;
    c.replace(c.find("NODE"), 4, node);
    return c;
  };
  BackgroundProcess a(for_node("a"), dir.path + "/a.out");
  // Node A is sure to host the store before B starts.
  REQUIRE_MESSAGE(a.wait_for("hosting the rendezvous store", 10s), a.output());
  BackgroundProcess b(for_node("b"), dir.path + "/b.out");
  CHECK(a.wait_exit(60s) == 0);
  CHECK(b.wait_exit(60s) == 0);
  INFO(both(a, b));
  // Rank 3 (on node B) failed once; node B restarted, and node A followed it.
  CHECK(b.output().find("rank 3: failing on request at step 0") != std::string::npos);
  CHECK(b.output().find("ringlab run [node 2]: restart 1 of 3: rank 3 exited with status 3") !=
        std::string::npos);
  CHECK(a.output().find("ringlab run [node 1]: restart 1 of 3: node 2 (") != std::string::npos);
  CHECK(a.output().find("left: rank 3 exited with status 3") != std::string::npos);
  // The second round ran every step on all four ranks, and they all finished.
  const WorkerLines w = lines_of({&a, &b});
  const std::vector<int> second =
      w.with({{"WORLD_SIZE", "4"}, {"GROUP_RANK", "0"}, {"TORCHELASTIC_RESTART_COUNT", "1"}});
  CHECK(second.size() == 2);
  for (const auto* agent : {&a, &b}) {
    const std::string out = agent->output();
    CHECK(out.find("every node's workers finished") != std::string::npos);
  }
  for (int rank = 0; rank < 4; ++rank) {
    const std::string done = "] rank " + std::to_string(rank) + " done at step 12\n";
    CHECK(std::count_if(w.env.begin(), w.env.end(), [](auto&) { return true; }) >= 4);
    CHECK((a.output() + b.output()).find(done) != std::string::npos);
  }
  // Node A hosts the store, and its trace has a lane per agent, with the
  // rounds and the restart in each.
  const std::string trace = ringlab::testing::read_file(dir.path + "/trace-a.json");
  CHECK(trace.find("\"name\":\"node 1 (") != std::string::npos);
  CHECK(trace.find("\"name\":\"node 2 (") != std::string::npos);
  CHECK(trace.find("\"name\":\"round 1: world size 4\"") != std::string::npos);
  CHECK(trace.find("\"name\":\"restart 1\"") != std::string::npos);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("a frozen agent: the others see its heartbeat lapse and go on without it") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string command =
      agent_command(dir.path, port, "1:3", "", "--steps 100000 --step-ms 100");
  BackgroundProcess a(command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("step 1 rank 0 world 2 ", 30s), a.output());
  BackgroundProcess b(command, dir.path + "/b.out");
  REQUIRE_MESSAGE(b.wait_for(" world 4 sum 4", 30s), both(a, b));
  // Its workers run on; only its heartbeat stops.
  b.signal(SIGSTOP);
  REQUIRE_MESSAGE(a.wait_for("stopped sending heartbeats (none for ", 10s), both(a, b));
  REQUIRE_MESSAGE(a.wait_for(alone_after_restart_2, 30s), both(a, b));
  CHECK(a.output().find("ringlab run [node 1]: restart 2 of 3: node 2 (") != std::string::npos);
  b.signal(SIGKILL);
  CHECK(b.wait_exit(10s) == 128 + 9);
  // Stopping node A (the host) ends the job.
  a.signal(SIGTERM);
  CHECK(a.wait_exit(20s) == 128 + 15);
  CHECK(a.output().find("interrupted by signal 15: ending the job (this node hosts the store)") !=
        std::string::npos);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("a node stopped by its user leaves; the others re-form at once and say why") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string command =
      agent_command(dir.path, port, "1:3", "", "--steps 100000 --step-ms 100");
  BackgroundProcess a(command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("step 1 rank 0 world 2 ", 30s), a.output());
  BackgroundProcess b(command, dir.path + "/b.out");
  REQUIRE_MESSAGE(b.wait_for(" world 4 sum 4", 30s), both(a, b));
  b.signal(SIGTERM);
  CHECK(b.wait_exit(20s) == 128 + 15);
  // No heartbeat lapse needed: node B said it was leaving.
  REQUIRE_MESSAGE(a.wait_for(alone_after_restart_2, 30s), both(a, b));
  INFO(both(a, b));
  CHECK(
      b.output().find("ringlab run [node 2]: interrupted by signal 15: this node leaves the job") !=
      std::string::npos);
  CHECK(a.output().find("ringlab run [node 1]: restart 2 of 3: node 2 (") != std::string::npos);
  CHECK(a.output().find("left: its agent was interrupted by signal 15") != std::string::npos);
  CHECK(a.output().find("stopped sending heartbeats") == std::string::npos);
  a.signal(SIGTERM);
  CHECK(a.wait_exit(20s) == 128 + 15);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("the node hosting the store dies: the others say so and stop their workers") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string command =
      agent_command(dir.path, port, "1:3", "", "--steps 100000 --step-ms 100");
  BackgroundProcess a(command, dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("step 1 rank 0 world 2 ", 30s), a.output());
  BackgroundProcess b(command, dir.path + "/b.out");
  REQUIRE_MESSAGE(b.wait_for(" world 4 sum 4", 30s), both(a, b));
  a.signal(SIGKILL);
  CHECK(b.wait_exit(20s) == 1);
  INFO(both(a, b));
  CHECK(b.output().find("lost the rendezvous store at 127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("a node that does not fit the job is refused, and the job goes on") {
  TemporaryFolder dir;
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const std::string endpoint = "--rdzv-endpoint 127.0.0.1:" + std::to_string(port);
  const std::string worker =
      std::string(ELASTIC_WORKER_EXE) + " --counter " + dir.path + "/counter";
  BackgroundProcess a(kCleanEnvironment + kSharedSecret + RINGLAB_EXE +
                          " run --nnodes 1:2 --nproc-per-node 2 " +
                          "--rdzv-id job " + endpoint + " " + kQuickElastic + " -- " + worker +
                          " --steps 100000 --step-ms 100",
                      dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("step 1 rank 0 world 2 ", 30s), a.output());

  auto run = run_ringlab_with_secret("run --nnodes 1:2 --nproc-per-node 3 --rdzv-id job " +
                                     endpoint + " " + kQuickElastic + " -- " + worker);
  CHECK(run.status == 1);
  CHECK(run.output.find("this node has --nproc-per-node 3, but the nodes of run 'job' have 2: "
                        "give every node the same --nproc-per-node") != std::string::npos);
  run = run_ringlab_with_secret("run --nnodes 1:2 --nproc-per-node 2 --rdzv-id other " +
                                endpoint + " " + kQuickElastic + " -- " + worker);
  CHECK(run.status == 1);
  CHECK(run.output.find("serves run 'job', but this node was started with --rdzv-id other: give "
                        "every node the same --rdzv-id") != std::string::npos);
  run = run_ringlab_with_secret("run --nnodes 1:3 --nproc-per-node 2 --rdzv-id job " +
                                endpoint + " " + kQuickElastic + " -- " + worker);
  CHECK(run.status == 1);
  CHECK(run.output.find("this node has --nnodes 1:3, but run 'job' was started with --nnodes "
                        "1:2") != std::string::npos);
  CHECK(run.seconds < 10);

  // Node A never noticed: no restart.
  CHECK(a.running());
  CHECK(a.output().find("restart 1") == std::string::npos);
  a.signal(SIGTERM);
  CHECK(a.wait_exit(20s) == 128 + 15);
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE("bad elastic options are refused with what to write instead") {
  const auto refused = [](const std::string& options, const std::string& says) {
    const auto run = ringlab::testing::run_ringlab("run " + options + " -- true");
    INFO(options);
    INFO(run.output);
    CHECK(run.status != 0);
    CHECK(run.output.find(says) != std::string::npos);
    CHECK(run.seconds < 10);
  };
  refused("--nnodes 3:1 --rdzv-endpoint 127.0.0.1:29400",
          "--nnodes 3:1: the minimum (3) is above the maximum (1); write MIN:MAX with MIN <= MAX");
  refused("--nnodes 0:2", "the minimum must be at least 1");
  refused("--nnodes 1:2", "--nnodes 1:2 needs --rdzv-endpoint HOST:PORT");
  refused("--nnodes 1:2 --rdzv-backend etcd --rdzv-endpoint h:1",
          "--rdzv-backend etcd: ringlab has the c10d rendezvous only");
  refused("--nnodes 1:2 --rdzv-endpoint host:99999", "write HOST:PORT");
  refused("--standalone --nnodes 2", "--standalone runs one node");
  refused("--max-restarts 1 --rdzv-conf join=1", "--rdzv-conf: unknown key 'join'");
  refused("--max-restarts 1 --monitor-interval 0", "--monitor-interval '0': give a positive");
  refused("--max-restarts 1 --time-limit-ms 100", "--time-limit-ms stops a static launch");
  refused("--max-restarts 1 --redirects 5", "--redirects '5': streams are 0 (none)");
  refused("--max-restarts 1 --nproc-per-node 2 -- ringlab-no-such-program",
          "cannot run 'ringlab-no-such-program'");
}

TEST_CASE("an open elastic job whose workers would listen beyond loopback is refused") {
  // run_ringlab leaves RINGLAB_JOB_TOKEN unset. 192.0.2.1 is never bound: the
  // agent refuses before it starts a worker.
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const auto run = ringlab::testing::run_shell(
      ringlab::testing::kCleanEnvironment + "RINGLAB_BIND_ADDR=192.0.2.1 " + RINGLAB_EXE +
      " run --nnodes 1:2 --rdzv-endpoint 127.0.0.1:" + std::to_string(port) +
      " --rdzv-conf last_call_timeout=0.2,open=true -- true");
  CHECK(run.status != 0);
  CHECK(run.output.find("this node's workers would listen on 192.0.2.1, which other machines can "
                        "reach, and this job is open (--rdzv-conf open=true): its workers refuse "
                        "to listen beyond loopback without a token; give every node the same "
                        "secret instead") != std::string::npos);
  CHECK(run.output.find("round 0") == std::string::npos);
}

TEST_CASE("an endpoint nobody serves, or a round that never fills, ends with what to do") {
  // 192.0.2.1 (TEST-NET-1) is not an address of this machine: it cannot host
  // the store there, and nobody answers.
  auto run = run_ringlab_with_secret(
      "run --nnodes 1:2 --rdzv-endpoint 192.0.2.1:29400 --rdzv-conf read_timeout=1 -- true");
  CHECK(run.status != 0);
  CHECK(run.output.find("cannot reach the rendezvous store at 192.0.2.1:29400 within 1 s") !=
        std::string::npos);
  CHECK(run.output.find("start the first node with the same --rdzv-endpoint") != std::string::npos);
  CHECK(run.seconds < 6);

  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  run = run_ringlab_with_secret(
      "run --nnodes 2:2 --rdzv-endpoint 127.0.0.1:" + std::to_string(port) +
      " --rdzv-conf join_timeout=1.5 -- true");
  CHECK(run.status != 0);
  // While it waits, it says for what (every third of the join timeout here).
  CHECK(run.output.find("ringlab run [node 1]: round 0: waiting for nodes: 1 in (node 1 (") !=
        std::string::npos);
  CHECK(run.output.find("), at least 2 needed (0.5 s of 1.5 s)") != std::string::npos);
  CHECK(run.output.find("no round formed within 1.5 s (1 node(s) in: node 1 (") !=
        std::string::npos);
  CHECK(run.output.find("--nnodes asks for at least 2): start the other nodes with the same "
                        "command") != std::string::npos);
  CHECK(run.seconds < 8);
}

TEST_CASE("one node: a failed worker restarts the group, with the restart count in its variables") {
  TemporaryFolder dir;
  // Rank 1 fails in the first two attempts, then the job succeeds.
  const std::string script =
      "echo rank $RANK attempt $TORCHELASTIC_RESTART_COUNT of $TORCHELASTIC_MAX_RESTARTS; "
      "if [ $RANK = 1 ] && [ $TORCHELASTIC_RESTART_COUNT -lt 2 ]; then "
      "echo \"rank 1: failing in attempt $TORCHELASTIC_RESTART_COUNT\" >&2; exit 4; fi";
  auto run =
      ringlab::testing::run_ringlab("run --standalone --nproc_per_node=2 --max_restarts=2 " +
                                    kQuickElastic + " -- sh -c '" + script + "' " + dir.path);
  INFO(run.output);
  CHECK(run.status == 0);
  for (int attempt = 0; attempt < 3; ++attempt)
    for (int rank = 0; rank < 2; ++rank)
      CHECK(run.output.find("rank " + std::to_string(rank) + " attempt " + std::to_string(attempt) +
                            " of 2\n") != std::string::npos);
  CHECK(run.output.find("restart 2 of 2: rank 1 exited with status 4") != std::string::npos);

  // One restart fewer: the job fails with the report.
  run = ringlab::testing::run_ringlab("run --standalone --nproc_per_node=2 --max_restarts=1 " +
                                      kQuickElastic + " -- sh -c '" + script + "' " + dir.path);
  CHECK(run.status == 4);
  CHECK(run.output.find("the job ended: rank 1 exited with status 4") != std::string::npos);
  CHECK(run.output.find("and the one restart of --max-restarts 1 is used up") != std::string::npos);
  CHECK(run.output.find("  error     : rank 1: failing in attempt 1\n") != std::string::npos);
  CHECK(left_running(dir.path, 3s).empty());
}

TEST_CASE("--max-restarts alone makes a one-node elastic run, as torchrun's options do") {
  const auto run =
      ringlab::testing::run_ringlab("run --max-restarts 3 --nproc-per-node 2 -- echo hi");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("hi\nhi\n") != std::string::npos);
  CHECK(run.output.find("restart") != std::string::npos);  // the agent's lines
}

TEST_CASE("--log-dir keeps every rank's output; --redirects takes it off the console") {
  TemporaryFolder dir;
  const std::string script = "echo out of $RANK; echo err of $RANK >&2";
  auto run =
      ringlab::testing::run_ringlab("run --standalone --nproc-per-node 2 --log-dir " + dir.path +
                                    "/logs --redirects 0:1 -- sh -c '" + script + "'");
  INFO(run.output);
  CHECK(run.status == 0);
  // Rank 0's stdout went to its file only; the rest to both.
  CHECK(run.output.find("out of 0\n") == std::string::npos);
  CHECK(run.output.find("out of 1\n") != std::string::npos);
  CHECK(run.output.find("err of 0\n") != std::string::npos);
  std::vector<std::filesystem::path> roots;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path + "/logs"))
    roots.push_back(entry.path());
  REQUIRE(roots.size() == 1);
  const std::string attempt = (roots.front() / "attempt_0").string();
  CHECK(ringlab::testing::read_file(attempt + "/0/stdout.log") == "out of 0\n");
  CHECK(ringlab::testing::read_file(attempt + "/0/stderr.log") == "err of 0\n");
  CHECK(ringlab::testing::read_file(attempt + "/1/stdout.log") == "out of 1\n");
  CHECK(ringlab::testing::read_file(attempt + "/1/stderr.log") == "err of 1\n");

  // The static launch takes the same options.
  run = ringlab::testing::run_ringlab("run --nproc-per-node 1 --log_dir " + dir.path +
                                      "/static -r 3 -- sh -c '" + script + "'");
  CHECK(run.status == 0);
  CHECK(run.output.find("of 0") == std::string::npos);
  CHECK(run.output.find("the ranks' output goes to " + dir.path + "/static/none_") !=
        std::string::npos);
}
