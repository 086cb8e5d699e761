// The checker of `ringlab exercise check` (exercises/supervise.hpp) against
// exercise programs that try it (exercise_mistakes.hpp): a verdict comes from
// the evidence every case leaves, never from the program's exit status; a
// case that does not return is named within its time limit while what passed
// is already printed; nothing the program started outlives the check, Ctrl-C
// included; and memory is capped with a message that says so.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "exercise_mistakes.hpp"
#include "exercises/evidence.hpp"
#include "exercises/stages.hpp"
#include "exercises/supervise.hpp"
#include "file_test_support.hpp"

namespace {

using namespace ringlab;
using namespace ringlab::exercises;
using Clock = std::chrono::steady_clock;

// The checker's verdict on mistake `name`, run in `folder`, the stages given
// (the simulator and inproc unless said): what it printed and when. The
// limits are generous unless a test is about them: a machine loaded by other
// work slows a case, it does not fail it.
struct Checked {
  CheckRun run;
  double seconds = 0;
  std::vector<std::pair<double, std::string>> printed;  // seconds after the start, text
};

Checked check_mistake(const std::string& name, const testing::Folder& folder,
                      std::vector<std::string> stages = {kSimulatorStage, "inproc"},
                      int case_seconds = 120, int wait_ms = 60000) {
  const auto& mistake = testing::mistakes::find_mistake(name);
  SuperviseOptions options;
  options.stages = std::move(stages);
  options.case_limit = std::chrono::seconds(case_seconds);
  options.wait_timeout = std::chrono::milliseconds(wait_ms);
  options.folder = folder.path.string();
  Checked checked;
  const auto start = Clock::now();
  const auto since = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  options.print = [&](std::string_view text) { checked.printed.emplace_back(since(), text); };
  checked.run = run_check(find_exercise(mistake.exercise), {EXERCISE_MISTAKES, name}, options);
  checked.seconds = since();
  return checked;
}

bool has(const std::string& text, const std::string& words) {
  return text.find(words) != std::string::npos;
}

// A pid a mistake wrote into the folder (waiting up to 60 s for it).
pid_t pid_in(const std::string& file) {
  for (int tries = 0; tries < 6000; ++tries) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

bool running(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

TEST_CASE("a right solution passes on the evidence of every case") {
  testing::Folder folder;
  SuperviseOptions options;
  options.stages = {kSimulatorStage, "inproc", "tcp"};
  options.case_limit = std::chrono::seconds(120);  // a loaded machine is no failure here
  options.wait_timeout = std::chrono::milliseconds(60000);
  options.folder = folder.path.string();
  const CheckRun run = run_check(find_exercise("ring_all_reduce"),
                                 {EXERCISE_SOLUTIONS, "ring_all_reduce"}, options);
  INFO(run.output);
  CHECK(run.passed);
  CHECK(has(run.output, "simulator  576 cases passed"));  // 9 worlds of 64
  CHECK(has(run.output, "tcp        585 cases passed"));  // and the 100,003 elements
}

TEST_CASE("ending the program with status 0 is no pass, however it is done") {
  testing::Folder folder;
  for (const char* name : {"exit_zero", "underscore_exit", "prints_passed"}) {
    const Checked checked = check_mistake(name, folder);
    INFO(name << ":\n" << checked.run.output);
    CHECK(!checked.run.passed);
    CHECK(has(checked.run.output, "FAILED: the check did not see every case come back right: "
                                  "case 1 of 64 in a world of 2 on simulator"));
    CHECK(has(checked.run.output, "rank 0 started it and never returned from your function"));
    CHECK(has(checked.run.output, "exited with status 0 all the same"));
    CHECK(has(checked.run.output, "std::exit, _exit, quick_exit, or an atexit handler"));
  }
  // Wrong, FAILED, and an atexit handler that turns the status 1 into 0.
  const Checked atexit = check_mistake("atexit_zero", folder);
  INFO(atexit.run.output);
  CHECK(!atexit.run.passed);
  CHECK(has(atexit.run.output, "FAILED on simulator: case 2 of 64 in a world of 2"));
  CHECK(has(atexit.run.output, "rank 0 returned with buffers that are not the closed form's"));
  CHECK(has(atexit.run.output, "exited with status 0 all the same"));
}

TEST_CASE("a digest made with another run's key, or for other values, is not evidence") {
  const Exercise& ring = find_exercise("ring_all_reduce");
  const Case c{.ranks = 2, .count = 7};
  RunKey key{}, other{};
  other[0] = std::byte{1};
  const CaseId id{kSimulatorStage, 2, 3, 1};
  const std::vector<std::byte> right = expected_bytes(ring, c, 1);
  std::vector<std::byte> wrong = right;
  wrong[0] ^= std::byte{1};
  CHECK(result_digest(key, id, right) == result_digest(key, id, right));
  CHECK(result_digest(key, id, right) != result_digest(other, id, right));
  CHECK(result_digest(key, id, right) != result_digest(key, id, wrong));
  CHECK(result_digest(key, id, right) != result_digest(key, {kSimulatorStage, 2, 3, 0}, right));
  // A float result within DDP's rounding digests as the closed form's.
  const Exercise& ddp = find_exercise("ddp_bucket_average");
  const Case g{.ranks = 3, .count = 2, .dtype = DType::Float32};
  const auto near = result_bytes(
      ddp, g, 0,
      [&](int b, std::size_t i) {
        return static_cast<double>(std::nextafter(static_cast<float>(expected_value(ddp, g, 0, b, i)),
                                                  1e9f));
      },
      {});
  CHECK(near == expected_bytes(ddp, g, 0));
}

TEST_CASE("a case that never returns is named within its limit, after what passed was printed") {
  testing::Folder folder;
  const Checked checked = check_mistake("never_returns_on_inproc", folder,
                                        {kSimulatorStage, "inproc"}, /*case_seconds=*/3, 1000);
  INFO(checked.run.output);
  CHECK(!checked.run.passed);
  CHECK(has(checked.run.output,
            "FAILED: case 1 of 65 in a world of 2 on inproc (2 ranks, 0 int64 elements per rank, "
            "op sum) did not return within 3 s: a loop that never ends, or a receive nobody "
            "answers?"));
  CHECK(has(checked.run.output, "rank 0 was still in your function"));
  CHECK(has(checked.run.output, "--case-seconds S"));
  CHECK(checked.seconds < 60);  // the limit's seconds after the last case, not 900
  // The simulator's line came as soon as it was written, seconds before the end.
  double simulator_line = -1;
  for (const auto& [at, text] : checked.printed)
    if (has(text, "simulator  576 cases passed")) simulator_line = at;
  REQUIRE(simulator_line >= 0);
  CHECK(checked.seconds - simulator_line >= 2.5);
  const pid_t spinner = pid_in(folder / "hang.pid");
  CHECK(spinner > 0);
  CHECK(!running(spinner));
}

TEST_CASE("a rank that spins in the simulator is named too") {
  testing::Folder folder;
  const Checked checked = check_mistake("never_returns", folder, {kSimulatorStage}, 2, 1000);
  INFO(checked.run.output);
  CHECK(has(checked.run.output, "case 1 of 64 in a world of 2 on simulator"));
  CHECK(has(checked.run.output, "did not return within 2 s"));
  CHECK(checked.seconds < 60);
}

TEST_CASE("a process the learner's function detaches does not outlive the check") {
  testing::Folder folder;
  const Checked checked = check_mistake("setsid_child", folder);
  INFO(checked.run.output);
  CHECK(checked.run.passed);  // it is right: only what it leaves behind is wrong
  const pid_t orphan = pid_in(folder / "orphan.pid");
  REQUIRE(orphan > 0);
  CHECK(!running(orphan));
}

TEST_CASE("memory is capped, and the rank that ran out says so") {
  testing::Folder folder;
  const Checked checked = check_mistake("reserves_10_gib", folder);
  INFO(checked.run.output);
  CHECK(!checked.run.passed);
  CHECK(has(checked.run.output, "FAILED on simulator: case 1 of 64 in a world of 1"));
  CHECK(has(checked.run.output, "rank 0 ran out of memory in your function (std::bad_alloc)"));
  CHECK(has(checked.run.output, "2048 MiB (ringlab exercise check --memory-mb sets it)"));
}

TEST_CASE("Ctrl-C during a check leaves nothing running") {
  testing::Folder folder;
  const pid_t checker = ::fork();
  REQUIRE(checker >= 0);
  if (checker == 0) {
    // The checker, as `ringlab exercise check` runs it, in a process of its own.
    SuperviseOptions options;
    options.stages = {kSimulatorStage};
    options.case_limit = std::chrono::seconds(120);
    options.folder = folder.path.string();
    const CheckRun run = run_check(find_exercise("ring_all_reduce"),
                                   {EXERCISE_MISTAKES, "never_returns"}, options);
    ::_exit(run.interrupted ? 128 + run.interrupted : 1);
  }
  const pid_t spinner = pid_in(folder / "hang.pid");
  REQUIRE(spinner > 0);
  CHECK(running(spinner));
  ::kill(checker, SIGINT);
  int status = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(30);
  while (::waitpid(checker, &status, WNOHANG) == 0 && Clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGINT);
  CHECK(!running(spinner));
}
