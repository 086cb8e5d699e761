// The process launcher (launcher/launcher.hpp) on small shell programs: the
// variables every rank gets, output passed through whole lines, and stopping
// the job when a rank fails, is killed, ignores SIGTERM or runs too long.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/launcher.hpp"

namespace {

using namespace std::chrono_literals;
using ringlab::launch::LaunchOptions;
using ringlab::launch::LaunchResult;

// The children's stdout and stderr land in two temporary files.
struct Captured {
  LaunchResult result;
  std::string out, err;
  double seconds = 0;
};

std::string read_all(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, file)) text.append(buffer, n);
  return text;
}

Captured run(LaunchOptions options) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out);
  REQUIRE(err);
  options.stdout_fd = fileno(out);
  options.stderr_fd = fileno(err);
  if (options.deadline.count() == 0)
    options.deadline = 60s;  // a broken launcher must not hang the test
  Captured captured;
  const auto start = std::chrono::steady_clock::now();
  captured.result = ringlab::launch::launch(options);
  captured.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  captured.out = read_all(out);
  captured.err = read_all(err);
  std::fclose(out);
  std::fclose(err);
  return captured;
}

LaunchOptions shell(int ranks, const std::string& script) {
  LaunchOptions options;
  options.nproc_per_node = ranks;
  options.program = {"/bin/sh", "-c", script};
  return options;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::multiset<std::string> line_set(const std::string& text) {
  const std::vector<std::string> lines = lines_of(text);
  return {lines.begin(), lines.end()};
}

}  // namespace

TEST_CASE("every rank gets the torchrun variables of its place in the job") {
  // Node 1 of 2 with 3 ranks per node: global ranks 3, 4, 5 of 6.
  LaunchOptions options =
      shell(3,
            "echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE "
            "$MASTER_ADDR $MASTER_PORT $RINGLAB_TIMEOUT_MS $EXTRA");
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "192.0.2.7";
  options.master_port = 29611;
  options.rank_timeout = 1234ms;
  options.extra_environment = {{"EXTRA", "x"}, {"RANK", "overridden by the launcher"}};
  const Captured c = run(options);
  CHECK(c.result.exit_code == 0);
  CHECK(c.result.message.empty());
  const std::multiset<std::string> lines = line_set(c.out);
  std::multiset<std::string> expected;
  for (int local = 0; local < 3; ++local)
    expected.insert(std::to_string(3 + local) + " 6 " + std::to_string(local) +
                    " 3 1 2 192.0.2.7 29611 1234 x");
  CHECK(lines == expected);
}

TEST_CASE("a rank inherits no descriptor of the launcher's but stdin, stdout and stderr") {
  // Inheritable (no O_CLOEXEC), like a socket a library opened without it.
  const int leaked = ::open("/dev/null", O_RDONLY);
  REQUIRE(leaked > 2);
  const Captured c = run(shell(1, "ls /proc/$$/fd"));
  ::close(leaked);
  CHECK(c.result.exit_code == 0);
  CHECK(c.out == "0\n1\n2\n");
}

namespace {

// A bound IPv4 loopback socket (port 0: the kernel picks), or -1 with errno.
int bind_loopback(int port, bool reuse_address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (reuse_address) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

int port_of(int fd) {
  sockaddr_in bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  return ntohs(bound.sin_port);
}

}  // namespace

// Jobs started side by side once picked the same free port between the pick
// and rank 0's bind, and one failed with "Address already in use"
// (tools/soak.sh): the launcher now holds the port until the job ends.
TEST_CASE("a port reserved for a job goes to no one else, yet its store binds it") {
  const ringlab::launch::PortReservation reserved("127.0.0.1");
  REQUIRE(reserved.port() > 0);
  // A bind without SO_REUSEADDR (a rank's own listener, another program) fails.
  CHECK(bind_loopback(reserved.port(), false) == -1);
  CHECK(errno == EADDRINUSE);
  // No pick of a free port (another job's launcher, a rank's listener) gets it.
  for (int i = 0; i < 2000; ++i) {
    const int fd = bind_loopback(0, i % 2 == 0);
    REQUIRE(fd >= 0);
    const int port = port_of(fd);
    ::close(fd);
    REQUIRE(port != reserved.port());
  }
  // The job's store binds with SO_REUSEADDR (transport/tcp/store_server.cpp)
  // and listens there.
  const int store = bind_loopback(reserved.port(), true);
  REQUIRE(store >= 0);
  CHECK(::listen(store, 16) == 0);
  ::close(store);
}

TEST_CASE("a single node picks a free port on the master address") {
  const int port = ringlab::launch::pick_free_port("127.0.0.1");
  CHECK(port > 0);
  // It is free: we can listen on it ourselves.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  ::close(fd);

  const Captured c = run(shell(2, "echo $MASTER_PORT"));
  REQUIRE(c.result.exit_code == 0);
  CHECK(c.result.master_port > 0);
  const std::string expected = std::to_string(c.result.master_port) + "\n";
  CHECK(c.out == expected + expected);

  CHECK_THROWS_WITH_AS(ringlab::launch::pick_free_port("192.0.2.1"),
                       doctest::Contains("cannot bind a port on master address '192.0.2.1'"),
                       std::runtime_error);
}

TEST_CASE("lines of different ranks never mix, even when a rank writes a line in pieces") {
  // Each line leaves the rank in three writes (sh's printf is a builtin: one
  // write each) with a pause between them, so passing the bytes through as
  // they come would mix them.
  const std::string pause = "j=0; while [ $j -lt 300 ]; do j=$((j+1)); done; ";
  const Captured c =
      run(shell(4, "i=0; while [ $i -lt 300 ]; do printf 'rank %s ' $RANK; " + pause +
                       "printf 'line %s ' $i; " + pause +
                       "printf 'end\\n'; printf 'err %s %s\\n' $RANK $i >&2; i=$((i+1)); done"));
  REQUIRE(c.result.exit_code == 0);
  std::map<int, int> next_line;  // per rank, in order
  for (const std::string& line : lines_of(c.out)) {
    int rank = -1, number = -1;
    char end[8] = {};
    REQUIRE_MESSAGE(std::sscanf(line.c_str(), "rank %d line %d %7s", &rank, &number, end) == 3,
                    line);
    CHECK(std::string(end) == "end");
    CHECK(number == next_line[rank]++);
  }
  CHECK(next_line == std::map<int, int>{{0, 300}, {1, 300}, {2, 300}, {3, 300}});
  CHECK(lines_of(c.err).size() == 1200);
}

TEST_CASE("a last line without a newline gets one, and --tee-prefix names the rank") {
  LaunchOptions options = shell(2, "printf 'a\\nb'; printf 'e' >&2");
  options.tee_prefix = true;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 0);
  const std::multiset<std::string> out = line_set(c.out);
  CHECK(out == std::multiset<std::string>{"[rank 0] a", "[rank 0] b", "[rank 1] a", "[rank 1] b"});
  CHECK(c.out.back() == '\n');
  const std::multiset<std::string> err = line_set(c.err);
  CHECK(err == std::multiset<std::string>{"[rank 0] e", "[rank 1] e"});
}

TEST_CASE("a failing rank stops the others and names itself") {
  LaunchOptions options =
      shell(4, "if [ $RANK = 2 ]; then echo 'rank 2 gives up' >&2; exit 3; fi; sleep 30");
  options.stop_after = 200ms;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 3);
  REQUIRE(c.result.first_failure);
  CHECK(c.result.first_failure->rank == 2);
  CHECK(c.result.message == "rank 2 exited with status 3; stopped the other 3 ranks");
  CHECK(c.err == "rank 2 gives up\n");
  CHECK(c.seconds < 5);
  for (const auto& rank : c.result.ranks)
    if (rank.rank != 2) CHECK(rank.stopped_by_us);
}

TEST_CASE("a rank killed by a signal is reported with the signal, the shell's way") {
  LaunchOptions options = shell(3, "if [ $RANK = 1 ]; then kill -9 $$; fi; sleep 30");
  options.stop_after = 100ms;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 128 + 9);
  CHECK(c.result.message == "rank 1 was killed by signal 9 (Killed); stopped the other 2 ranks");
  CHECK(c.seconds < 5);
}

// A folder for a test's files, removed with them.
struct TemporaryFolder {
  std::string path;
  TemporaryFolder() {
    char name[] = "/tmp/ringlab-launch-XXXXXX";
    REQUIRE(::mkdtemp(name));
    path = name;
  }
  ~TemporaryFolder() { std::filesystem::remove_all(path); }
};

TEST_CASE("a SIGKILL while the kernel's count of OOM kills went up is reported as out of memory") {
  TemporaryFolder folder;
  const std::string counter = folder.path + "/vmstat";
  { std::ofstream(counter) << "nr_free_pages 1\noom_kill 5\npgfault 7\n"; }
  // Rank 1 plays the kernel: the count goes up, then SIGKILL.
  LaunchOptions options = shell(3, "if [ $RANK = 1 ]; then printf 'oom_kill 6\\n' > " + counter +
                                       "; kill -9 $$; fi; sleep 30");
  options.stop_after = 100ms;
  options.oom_kill_counter = counter;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 128 + 9);
  REQUIRE(c.result.first_failure);
  CHECK(c.result.first_failure->oom == ringlab::launch::OomEvidence::Yes);
  CHECK(c.result.message ==
        "rank 1 was killed by the kernel's out-of-memory killer (signal 9, SIGKILL; the kernel's "
        "count of OOM kills went up meanwhile); stopped the other 2 ranks");
}

TEST_CASE(
    "a silent SIGKILL with no count to read is likely out of memory; one after an error is not") {
  LaunchOptions options = shell(2, "if [ $RANK = 1 ]; then kill -9 $$; fi; sleep 30");
  options.stop_after = 100ms;
  options.oom_kill_counter = "/nonexistent/vmstat";
  Captured c = run(options);
  CHECK(c.result.message ==
        "rank 1 was killed by signal 9 (Killed) and printed no error: likely out of memory (the "
        "kernel's OOM killer sends SIGKILL; dmesg says whether it did); stopped the other 1 rank");

  // It said something first: no guess, just the signal.
  options.program.back() =
      "if [ $RANK = 1 ]; then echo 'rank 1: giving up' >&2; kill -9 $$; fi; sleep 30";
  c = run(options);
  CHECK(c.result.message == "rank 1 was killed by signal 9 (Killed); stopped the other 1 rank");
  REQUIRE(c.result.first_failure);
  CHECK(c.result.first_failure->error == "rank 1: giving up");

  // Another signal is that signal.
  options.program.back() = "if [ $RANK = 0 ]; then kill -SEGV $$; fi; sleep 30";
  c = run(options);
  CHECK(c.result.exit_code == 128 + 11);
  CHECK(c.result.message ==
        "rank 0 was killed by signal 11 (Segmentation fault); stopped the other 1 rank");
}

TEST_CASE("the rank that reported its error first is blamed, not the first to exit") {
  // Rank 0 reports at once but takes 0.6 s to exit (cleaning up); rank 1
  // fails later, silently, and exits first.
  LaunchOptions options =
      shell(2,
            "if [ $RANK = 0 ]; then echo 'rank 0: bad input' >&2; sleep 0.6; exit 4; fi; "
            "sleep 0.3; exit 5");
  options.stop_after = 2s;
  Captured c = run(options);
  CHECK(c.result.exit_code == 4);
  CHECK(c.result.message == "rank 0 exited with status 4; rank 1 failed after it");

  // The same through the error file (TORCHELASTIC_ERROR_FILE, torch's format).
  options.program.back() =
      "if [ $RANK = 0 ]; then printf '{\"message\": {\"message\": \"RuntimeError: bad input\", "
      "\"extraInfo\": {\"timestamp\": \"0\"}}}' > \"$TORCHELASTIC_ERROR_FILE\"; sleep 0.6; "
      "exit 4; fi; sleep 0.3; exit 5";
  c = run(options);
  CHECK(c.result.exit_code == 4);
  REQUIRE(c.result.first_failure);
  CHECK(c.result.first_failure->rank == 0);
  CHECK(c.result.first_failure->error == "RuntimeError: bad input");
  CHECK(c.result.message == "rank 0 exited with status 4; rank 1 failed after it");
}

TEST_CASE("the TCP transport's notices to the operator are not a rank's error report") {
  // Rank 0 prints a notice naming itself ("ringlab tcp: rank 0: ..."), then
  // exits 0 later; rank 1 reports an error and fails. Rank 1 is blamed.
  LaunchOptions options = shell(
      2,
      "if [ $RANK = 0 ]; then echo 'ringlab tcp: rank 0: waiting for rank 1 (5 s of 30 s)' >&2; "
      "sleep 0.6; exit 3; fi; sleep 0.2; echo 'rank 1: bad input' >&2; exit 5");
  options.stop_after = 2s;
  const Captured c = run(options);
  REQUIRE(c.result.first_failure);
  CHECK(c.result.first_failure->rank == 1);
  CHECK(c.result.exit_code == 5);
}

TEST_CASE("a rank frozen by SIGSTOP is blamed, and stopping it still works") {
  // Rank 2 freezes; the others notice a while later and fail.
  LaunchOptions options =
      shell(3,
            "if [ $RANK = 2 ]; then kill -STOP $$; fi; sleep 0.4; "
            "echo \"rank $RANK: timed out waiting for rank $(( (RANK + 1) % 3 ))\" >&2; exit 1");
  options.stop_after = 100ms;
  options.kill_after = 2s;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 1);
  CHECK(c.result.message ==
        "rank 2 was frozen by signal 19 (Stopped (signal)) and did not resume; ranks 0, 1 failed "
        "after it");
  // SIGTERM reached it (with SIGCONT), well before SIGKILL was due.
  REQUIRE(c.result.ranks.size() == 3);
  CHECK(c.result.ranks[2].signal_number == 15);
  CHECK(c.seconds < 1.8);
}

TEST_CASE("the others get their moment to fail on their own before SIGTERM") {
  // Rank 0 fails; rank 1 notices (here: a file appears) and fails too, a
  // moment later (so that rank 0 is the first failure).
  char dir_template[] = "/tmp/ringlab-launch-XXXXXX";
  REQUIRE(::mkdtemp(dir_template));
  const std::string flag = std::string(dir_template) + "/failed";
  LaunchOptions options = shell(2, "if [ $RANK = 0 ]; then touch " + flag +
                                       "; exit 1; fi; "
                                       "i=0; while [ ! -e " +
                                       flag +
                                       " ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; "
                                       "sleep 0.3; echo 'rank 1: peer rank 0 is gone' >&2; exit 1");
  options.stop_after = 10s;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 1);
  CHECK(c.result.message == "rank 0 exited with status 1; rank 1 failed after it");
  CHECK(c.err == "rank 1: peer rank 0 is gone\n");
  CHECK(c.seconds < 8);
  ::unlink(flag.c_str());
  ::rmdir(dir_template);
}

TEST_CASE("a rank that ignores SIGTERM gets SIGKILL") {
  // Rank 0 fails only once rank 1 ignores SIGTERM (it says so with a file).
  char dir_template[] = "/tmp/ringlab-launch-XXXXXX";
  REQUIRE(::mkdtemp(dir_template));
  const std::string ready = std::string(dir_template) + "/ready";
  LaunchOptions options =
      shell(2, "if [ $RANK = 0 ]; then i=0; while [ ! -e " + ready +
                   " ] && [ $i -lt 200 ]; do "
                   "sleep 0.02; i=$((i+1)); done; exit 5; fi; trap '' TERM; touch " +
                   ready + "; sleep 30");
  options.stop_after = 0ms;
  options.kill_after = 300ms;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 5);
  CHECK(c.result.message == "rank 0 exited with status 5; stopped the other 1 rank");
  REQUIRE(c.result.ranks.size() == 2);
  CHECK(c.result.ranks[1].signal_number == 9);
  CHECK(c.seconds < 8);
  ::unlink(ready.c_str());
  ::rmdir(dir_template);
}

TEST_CASE("a job that runs past its time limit is stopped") {
  LaunchOptions options = shell(2, "sleep 30");
  options.deadline = 300ms;
  const Captured c = run(options);
  CHECK(c.result.exit_code == 124);
  CHECK(c.result.message == "the job ran longer than its limit of 300 ms; stopped the 2 ranks");
  CHECK(c.seconds < 5);
}

TEST_CASE("bad options are refused with what to do instead") {
  LaunchOptions options;
  CHECK_THROWS_WITH_AS(ringlab::launch::validate(options),
                       doctest::Contains("no program to run: put it after --"),
                       std::invalid_argument);
  options.program = {"true"};
  options.nproc_per_node = 0;
  CHECK_THROWS_WITH_AS(ringlab::launch::validate(options),
                       "--nproc-per-node is 0: it must be at least 1", std::invalid_argument);
  options.nproc_per_node = 2;
  options.nnodes = 2;
  options.node_rank = 2;
  options.master_port = 29500;
  CHECK_THROWS_WITH_AS(ringlab::launch::validate(options),
                       "--node-rank is 2 but --nnodes is 2: node ranks go from 0 to 1",
                       std::invalid_argument);
  options.node_rank = 1;
  options.master_port = 0;
  CHECK_THROWS_WITH_AS(ringlab::launch::validate(options),
                       doctest::Contains("give every node the same --master-port"),
                       std::invalid_argument);
  options.master_port = 29500;
  CHECK_NOTHROW(ringlab::launch::validate(options));

  LaunchOptions missing;
  missing.program = {"ringlab-no-such-program"};
  CHECK_THROWS_WITH_AS(ringlab::launch::launch(missing),
                       doctest::Contains("cannot run 'ringlab-no-such-program': no such program"),
                       std::invalid_argument);
}
