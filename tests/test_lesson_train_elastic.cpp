// `ringlab lesson train_elastic`, seed 000's program: alone (its ranks
// started by the tcp backend), resumed from its checkpoint, killed while it
// saves, and refused a checkpoint that does not load. Its losses and models
// are checked against a float64 reference (train_elastic_lines.hpp). The
// two-node scenario is test_elastic_scenario.cpp.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
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
using ringlab::testing::kCleanEnvironment;
using ringlab::testing::kQuickElastic;
using ringlab::testing::left_running;
using ringlab::testing::run_ringlab;
using ringlab::testing::ReplayedRounds;
using ringlab::testing::TemporaryFolder;
using ringlab::testing::TrainElasticLines;
namespace training = ringlab::training;

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// The pids of the ranks 0..world-1 whose "Initializing" line says this world.
std::vector<int> pids_of_world(const TrainElasticLines& lines, int world) {
  std::vector<int> pids;
  for (int rank = 0; rank < world; ++rank) {
    const std::vector<int> found = lines.with({{"WORLD_SIZE", std::to_string(world)}}, rank);
    REQUIRE(found.size() == 1);
    pids.push_back(found.front());
  }
  return pids;
}

// Files created in a folder, as inotify reports them.
class CreatedFiles {
 public:
  explicit CreatedFiles(const std::string& folder) {
    fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    REQUIRE(fd_ >= 0);
    REQUIRE(::inotify_add_watch(fd_, folder.c_str(), IN_CREATE) >= 0);
  }
  ~CreatedFiles() { ::close(fd_); }
  CreatedFiles(const CreatedFiles&) = delete;
  CreatedFiles& operator=(const CreatedFiles&) = delete;

  // The name of the next file created whose name starts with prefix; "" after limit.
  std::string next(const std::string& prefix, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    alignas(inotify_event) char buffer[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        const std::string name = event->len ? event->name : "";
        if (name.rfind(prefix, 0) == 0) return name;
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    return "";
  }

 private:
  int fd_ = -1;
};

// Stops process pid (not a child: a descendant, which ptrace may trace) at
// the entry of its first write() into a file in `folder`, and kills it
// there with SIGKILL: the file is open, nothing of it written. Returns that
// file's path; "" with `why` set when ptrace is not allowed here or the
// process wrote nothing there within `limit`.
std::string kill_at_first_write(pid_t pid, const std::string& folder,
                                std::chrono::milliseconds limit, std::string& why) {
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, PTRACE_O_TRACESYSGOOD) != 0) {
    why = std::string("ptrace(PTRACE_SEIZE) refused: ") + std::strerror(errno);
    return "";
  }
  ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, __WALL | WNOHANG);
    if (got == 0) {
      std::this_thread::sleep_for(100us);
      continue;
    }
    if (got != pid || WIFEXITED(status) || WIFSIGNALED(status)) {
      why = "the process ended before it wrote into " + folder;
      return "";
    }
    int resume_signal = 0;
    if (WSTOPSIG(status) == (SIGTRAP | 0x80)) {  // a system call
      __ptrace_syscall_info info{};
      ::ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof info, &info);
      if (info.op == PTRACE_SYSCALL_INFO_ENTRY &&
          (info.entry.nr == SYS_write || info.entry.nr == SYS_pwrite64 ||
           info.entry.nr == SYS_writev)) {
        char target[4096] = {};
        const std::string fd_link =
            "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(info.entry.args[0]);
        if (::readlink(fd_link.c_str(), target, sizeof target - 1) > 0 &&
            std::string(target).rfind(folder + "/", 0) == 0) {
          ::kill(pid, SIGKILL);
          // Collected here first (its tracer), then by its parent.
          while (::waitpid(pid, &status, __WALL) == pid && !WIFEXITED(status) &&
                 !WIFSIGNALED(status)) {
          }
          return target;
        }
      }
    } else if (status >> 16 == 0) {
      resume_signal = WSTOPSIG(status);  // a signal for it: pass it on
    }
    ::ptrace(PTRACE_SYSCALL, pid, nullptr, resume_signal);
  }
  ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
  why = "it wrote nothing into " + folder + " within " + std::to_string(limit.count()) + " ms";
  return "";
}

// Waits until process pid is gone or a zombie.
bool gone(int pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string stat = ringlab::testing::read_file("/proc/" + std::to_string(pid) + "/stat");
    const std::size_t close = stat.rfind(") ");
    if (stat.empty() || (close != std::string::npos && stat[close + 2] == 'Z')) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

}  // namespace

TEST_CASE(
    "train_elastic alone: the article's lines, the reference's losses, and a second run "
    "resumes where the first one stopped") {
  TemporaryFolder dir;
  const std::string checkpoint = dir.path + "/checkpoint.pt";
  // The default world (4 ranks, as the article's node 0), 3 epochs.
  auto run = run_ringlab("lesson train_elastic --max-epoch 3 --checkpoint " + checkpoint);
  INFO(run.output);
  REQUIRE(run.status == 0);
  const TrainElasticLines first(run.output);
  CHECK(first.other.empty());
  CHECK(first.loaded.empty());  // no checkpoint yet
  REQUIRE(first.starts.size() == 4);
  std::string master_port;
  for (int rank = 0; rank < 4; ++rank) {
    CAPTURE(rank);
    const std::vector<int> pids =
        first.with({{"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "4"}}, rank);
    REQUIRE(pids.size() == 1);
    const auto& worker = first.workers.at(pids.front());
    CHECK(worker.local_rank == rank);
    CHECK(worker.env.at("MASTER_ADDR") == "127.0.0.1");
    if (master_port.empty()) master_port = worker.env.at("MASTER_PORT");
    CHECK(worker.env.at("MASTER_PORT") == master_port);
    CHECK(worker.epochs == std::vector<std::int64_t>{0, 1, 2});
  }
  ReplayedRounds reference;
  reference.round(first, pids_of_world(first, 4), 4);
  training::Checkpoint saved = training::load_checkpoint(checkpoint);
  CHECK(saved.epoch == 2);  // the last epoch done, as the article's save_checkpoint(i, ...)
  REQUIRE(saved.optimizer);
  CHECK(saved.optimizer->options.lr == 0.001);
  ringlab::testing::check_model(saved, reference.after(2).front());

  // Again, on 2 ranks, to epoch 6: it loads the checkpoint on every rank and,
  // as the article's program, trains epoch 2 again from the model saved after
  // it, then 3 to 5. Rank 0 says why epoch 2 runs again.
  run = run_ringlab("lesson train_elastic -n 2 --max-epoch 6 --checkpoint " + checkpoint);
  REQUIRE(run.status == 0);
  const TrainElasticLines second(run.output);
  INFO(run.output);
  CHECK(second.other.empty());
  CHECK(second.loaded == std::vector<std::string>(2, checkpoint));
  CHECK(second.resumed == std::vector<std::int64_t>{2});
  CHECK(run.output.find("] resuming at epoch 2: " + checkpoint +
                        " was saved after epoch 2's step with \"epoch\": 2 (the article's "
                        "save_checkpoint(i, ...)), and training resumes at the epoch it holds, so "
                        "epoch 2 runs again and its update is applied a second time\n") !=
        std::string::npos);
  for (int rank = 0; rank < 2; ++rank) {
    const std::vector<int> pids = second.with({{"WORLD_SIZE", "2"}}, rank);
    REQUIRE(pids.size() == 1);
    CHECK(second.workers.at(pids.front()).epochs == std::vector<std::int64_t>{2, 3, 4, 5});
  }
  reference.round(second, pids_of_world(second, 2), 2);
  saved = training::load_checkpoint(checkpoint);
  CHECK(saved.epoch == 5);
  ringlab::testing::check_model(saved, reference.after(5).front());

  // At --max-epoch 5 nothing is left to do: it says so and trains nothing.
  run = run_ringlab("lesson train_elastic -n 2 --max-epoch 5 --checkpoint " + checkpoint);
  CHECK(run.status == 0);
  CHECK(run.output.find("checkpoint '" + checkpoint +
                        "' is at epoch 5 and --max-epoch is 5: nothing left to train") !=
        std::string::npos);
  CHECK(TrainElasticLines(run.output).epochs.empty());
  CHECK(TrainElasticLines(run.output).resumed.empty());

  // Ranks that are threads of one process have no master to print.
  run = run_ringlab("lesson train_elastic --backend inproc -n 2 --max-epoch 1 --checkpoint " +
                    dir.path + "/inproc.pt");
  CHECK(run.status == 0);
  CHECK(run.output.find("] Initializing process group with: {'WORLD_SIZE': '2', "
                        "'LOCAL_WORLD_SIZE': '2'}\n") != std::string::npos);
  ringlab::ref::ToyParams p = ringlab::testing::train_elastic_start();
  const std::vector<double> losses = ringlab::testing::train_elastic_epoch(p, 0, 2);
  const TrainElasticLines inproc(run.output);
  REQUIRE(inproc.epochs.size() == 2);
  for (const auto& e : inproc.epochs)
    CHECK(ringlab::ref::close(e.loss, losses[static_cast<std::size_t>(e.rank)], 1e-5));
}

TEST_CASE("train_elastic's options out of range are refused before any rank starts") {
  for (const auto& [options, says] : {
           std::pair{"--epoch-seconds -1",
                     "--epoch-seconds: '-1' is not allowed: give a number of "
                     "seconds from 0 to 3600"},
           std::pair{"--epoch-seconds soon", "--epoch-seconds: 'soon' is not allowed"},
           std::pair{"--max-epoch 0", "--max-epoch: Value 0 not in range 1 to 1000000"},
       }) {
    const auto run = run_ringlab(std::string("lesson train_elastic ") + options);
    INFO(run.output);
    CHECK(run.status != 0);
    CHECK(run.output.find(says) != std::string::npos);
    CHECK(run.output.find("Initializing process group") == std::string::npos);
  }
}

TEST_CASE("the tour shows train_elastic without running it, and says why") {
  const auto run = run_ringlab("tour --backend inproc");
  REQUIRE(run.status == 0);
  CHECK(run.output.find("# train_elastic (world 4): seed 000's elastic training") !=
        std::string::npos);
  CHECK(run.output.find("not run in the tour: alone it trains 100 epochs") != std::string::npos);
  CHECK(run.output.find("train worker starting") == std::string::npos);
}

TEST_CASE("a checkpoint that does not load ends the job, and the launcher's report says why") {
  TemporaryFolder dir;
  { std::ofstream(dir.path + "/notes.pt") << "epoch 35\n"; }
  {
    std::ofstream(dir.path + "/torch.pt", std::ios::binary) << "PK\x03\x04" << std::string(64, 'x');
  }
  training::Linear other(10, 3);
  training::SGD sgd(other.parameters(), {});
  training::save_checkpoint(
      {.model = other.state_dict(), .optimizer = sgd.state_dict(), .epoch = 4},
      dir.path + "/other-model.pt");
  const struct {
    std::string file, says;
  } cases[] = {
      {"notes.pt", "is not a ringlab checkpoint: it is not a JSON object (it starts with "},
      {"torch.pt", "is not a ringlab checkpoint: it is a zip archive, as torch.save writes"},
      {"other-model.pt",
       "it holds another model than this lesson's ToyModel: Error(s) in loading state_dict for "
       "ToyModel: Missing key(s) in state_dict: \"net1.weight\", \"net1.bias\", \"net2.weight\", "
       "\"net2.bias\". Unexpected key(s) in state_dict: \"weight\", \"bias\"."},
  };
  for (const auto& c : cases) {
    const std::string path = dir.path + "/" + c.file;
    const std::string error = "cannot resume from checkpoint '" + path + "': ";
    const std::string what_to_do = "(remove it to start at epoch 0, or give another --checkpoint)";
    // Under the elastic launcher: every restart fails the same way, and the
    // report at the end shows the error.
    auto run = run_ringlab("run --standalone --nproc-per-node 2 --max-restarts 1 " + kQuickElastic +
                           " -- " + RINGLAB_EXE + " lesson train_elastic --checkpoint " + path);
    INFO(run.output);
    CHECK(run.status == 1);
    CHECK(run.output.find("restart 1 of 1: rank ") != std::string::npos);
    CHECK(run.output.find("and the one restart of --max-restarts 1 is used up") !=
          std::string::npos);
    const std::size_t report = run.output.find("Root cause (first observed failure):");
    REQUIRE(report != std::string::npos);
    const std::string error_line = run.output.substr(run.output.find("  error     : ", report));
    CHECK(error_line.rfind("  error     : ringlab: error: rank ", 0) == 0);
    CHECK(error_line.find(error) != std::string::npos);
    CHECK(error_line.find(c.says) != std::string::npos);
    CHECK(error_line.find(what_to_do) < error_line.find('\n'));
    CHECK(TrainElasticLines(run.output).epochs.empty());
    CHECK(run.seconds < 20);
    // Alone: the same error, and the run fails.
    run = run_ringlab("lesson train_elastic -n 2 --checkpoint " + path);
    CHECK(run.status == 1);
    CHECK(run.output.find("ringlab: error: rank 0: " + error) != std::string::npos);
    CHECK(run.output.find(c.says) != std::string::npos);
    // The file is left as it was.
    CHECK(std::filesystem::exists(path));
  }
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE(
    "nodes that see different checkpoints are refused, rather than training different "
    "epochs together") {
  TemporaryFolder dir;
  // Node A finds a checkpoint at epoch 1 (the last one trained, as the
  // article saves it), node B (another --checkpoint: as if on a machine
  // without the shared folder) none.
  REQUIRE(run_ringlab("lesson train_elastic -n 2 --max-epoch 2 --checkpoint " + dir.path + "/a.pt")
              .status == 0);
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  const auto node = [&](const std::string& checkpoint) {
    return kCleanEnvironment + ringlab::testing::kSharedSecret + RINGLAB_EXE +
           " run --nnodes 2:2 --nproc-per-node 2 --rdzv-id both --rdzv-endpoint 127.0.0.1:" +
           std::to_string(port) + " " + kQuickElastic + " -- " + RINGLAB_EXE +
           " lesson train_elastic --checkpoint " + dir.path + "/" + checkpoint;
  };
  BackgroundProcess a(node("a.pt"), dir.path + "/a.out");
  REQUIRE_MESSAGE(a.wait_for("hosting the rendezvous store", 10s), a.output());
  BackgroundProcess b(node("b.pt"), dir.path + "/b.out");
  CHECK(a.wait_exit(30s) == 1);
  CHECK(b.wait_exit(30s) == 1);
  const std::string out = a.output() + b.output();
  INFO(out);
  CHECK(out.find(": the ranks do not resume at the same epoch from checkpoint '") !=
        std::string::npos);
  CHECK(out.find("(rank 0 at epoch 1, rank 1 at epoch 1, rank 2 found none, rank 3 found none): "
                 "every node must see the same file; give --checkpoint a path in a folder they "
                 "share") != std::string::npos);
  CHECK(TrainElasticLines(out).epochs.empty());
  CHECK(!std::filesystem::exists(dir.path + "/b.pt"));
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}

TEST_CASE(
    "rank 0 killed while it saves: the next round loads a whole checkpoint, and the run "
    "ends with the model of the reference replaying its rounds") {
  TemporaryFolder dir;
  const std::string folder = dir.path + "/checkpoints";
  std::filesystem::create_directory(folder);
  const std::string checkpoint = folder + "/checkpoint.pt";
  constexpr int kEpochs = 30;
  constexpr int kKills = 3;
  BackgroundProcess job(kCleanEnvironment + RINGLAB_EXE +
                            " run --standalone --nproc-per-node 2 --max-restarts " +
                            std::to_string(kKills) + " " + kQuickElastic + " -- " + RINGLAB_EXE +
                            " lesson train_elastic --epoch-seconds 0.02 --max-epoch " +
                            std::to_string(kEpochs) + " --checkpoint " + checkpoint,
                        dir.path + "/job.out");
  // Each round: once its rank 0 trains, stop it as it starts to write its
  // next checkpoint, and kill it (SIGKILL) there. Where ptrace is not
  // allowed, kill it as soon as it creates its temporary file (a race that it
  // may win).
  std::vector<std::string> half_written;
  for (int round = 0; round < kKills; ++round) {
    int pid = 0;
    REQUIRE_MESSAGE(job.wait_for(
                        [&](const std::string& out) {
                          const TrainElasticLines lines(out);
                          pid = lines.pid_of(0, round);
                          return pid > 0 && lines.trained(pid);
                        },
                        30s),
                    job.output());
    std::string why;
    std::string file = kill_at_first_write(pid, folder, 10s, why);
    if (file.empty()) {
      MESSAGE("cannot stop rank 0 at its write: " << why);
      CreatedFiles created(folder);
      const std::string temporary = created.next(".checkpoint.pt.tmp-", 10s);
      REQUIRE_MESSAGE(!temporary.empty(), job.output());
      ::kill(pid, SIGKILL);
      file = folder + "/" + temporary;
    }
    REQUIRE(gone(pid, 5s));
    // What it was writing is still there: it died before the rename.
    if (std::filesystem::exists(file)) half_written.push_back(file);
  }
  REQUIRE(job.wait_exit(60s) == 0);
  const std::string out = job.output();
  INFO(out);
  // Every kill (most, if only the race was possible) hit a save in the
  // middle: its temporary file is left, never the checkpoint itself.
  CHECK(half_written.size() >= 1);
  for (const std::string& file : half_written) CHECK(file != checkpoint);
  CHECK(out.find("restart " + std::to_string(kKills) + " of " + std::to_string(kKills) +
                 ": rank 0 ") != std::string::npos);

  // Every round after the first loaded the checkpoint on both ranks and
  // resumed where the one before had got to (or at the epoch before, when
  // rank 0 died saving it), and its rank 0 said which epoch runs again.
  const TrainElasticLines lines(out);
  CHECK(lines.loaded == std::vector<std::string>(2 * kKills, checkpoint));
  CHECK(lines.resumed.size() == kKills);
  ReplayedRounds reference;
  std::int64_t last_done = -1;
  for (int round = 0; round <= kKills; ++round) {
    const std::vector<int> pids = {lines.pid_of(0, round), lines.pid_of(1, round)};
    REQUIRE(pids[0] > 0);
    REQUIRE(pids[1] > 0);
    if (round > 0) ringlab::testing::check_resume(lines, pids, last_done);
    last_done = lines.last_epoch(pids);
    // Its losses follow from a state an earlier round saved.
    reference.round(lines, pids, 2);
  }
  CHECK(last_done == kEpochs - 1);
  const training::Checkpoint final_checkpoint = training::load_checkpoint(checkpoint);
  CHECK(final_checkpoint.epoch == kEpochs - 1);
  ringlab::testing::check_model(final_checkpoint, reference.after(kEpochs - 1).front());
  const std::vector<std::string> left = left_running(dir.path, 3s);
  CHECK_MESSAGE(left.empty(), joined(left));
}
