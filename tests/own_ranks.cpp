// A program that starts its own tcp ranks, as a user writes one, for
// test_own_ranks.cpp: `own_ranks MODE`.
//   twice        prints a line (not flushed), runs a world of 2 ranks, a line,
//                a world of 3, a line: every line must come out once, in order.
//   fail         rank 2 of 4 throws; main catches run_ranks' exception, prints
//                it and returns 3 (the library ended nothing).
//   killed       rank 1 of 3 is killed by SIGKILL before a barrier.
//   hang         rank 3 of 4 sleeps 60 s while the others all_reduce with a
//                1.5 s timeout: the world must end long before.
//   answers      run_ranks_collecting on tcp and on inproc: rank 1 answers
//                1 MiB, the others a line; each rank also says what its
//                environment holds.
//   threaded     runs a world of 2 while a second thread of the program waits:
//                refused before any fork, saying why; then, that thread
//                ended, the same world runs.
//   before_main  whether anything changed the process between the start of
//                static initialization and main: fd 1, the open descriptors,
//                the environment, the signal handlers.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/backends.hpp"

extern char** environ;

namespace {

// ---- before main --------------------------------------------------------------

// The process as the kernel and the C library handed it over. Taken by a
// constructor of priority 101, which runs before every C++ static object of
// the program and of the static ringlab libraries linked into it (the linker
// sorts .init_array by priority; default-priority initializers come last).
// Plain C data only: nothing of C++ is initialized yet.
struct Snapshot {
  dev_t stdout_device = 0;
  ino_t stdout_inode = 0;
  int stdout_flags = -1;
  bool open[1024] = {};
  unsigned long environment_hash = 0;
  void (*handlers[65])(int) = {};
};
Snapshot at_start;

unsigned long hash_environment() {
  unsigned long hash = 5381;
  for (char** entry = environ; *entry; ++entry)
    for (const char* c = *entry; *c; ++c) hash = hash * 33 + static_cast<unsigned char>(*c);
  return hash;
}

void take(Snapshot& s) {
  struct stat status {};
  if (::fstat(1, &status) == 0) {
    s.stdout_device = status.st_dev;
    s.stdout_inode = status.st_ino;
  }
  s.stdout_flags = ::fcntl(1, F_GETFL);
  for (int fd = 0; fd < 1024; ++fd) s.open[fd] = ::fcntl(fd, F_GETFD) != -1;
  s.environment_hash = hash_environment();
  for (int signal_number = 1; signal_number < 65; ++signal_number) {
    struct sigaction action {};
    if (::sigaction(signal_number, nullptr, &action) == 0)
      s.handlers[signal_number] = action.sa_handler;
  }
}

__attribute__((constructor(101))) void snapshot_before_static_objects() { take(at_start); }

int before_main() {
  static Snapshot now;
  take(now);
  std::vector<std::string> changed;
  if (now.stdout_device != at_start.stdout_device || now.stdout_inode != at_start.stdout_inode ||
      now.stdout_flags != at_start.stdout_flags)
    changed.push_back("fd 1 is another file");
  for (int fd = 0; fd < 1024; ++fd)
    if (now.open[fd] != at_start.open[fd])
      changed.push_back("descriptor " + std::to_string(fd) +
                        (now.open[fd] ? " was opened" : " was closed"));
  if (now.environment_hash != at_start.environment_hash)
    changed.push_back("the environment changed");
  for (int signal_number = 1; signal_number < 65; ++signal_number)
    if (now.handlers[signal_number] != at_start.handlers[signal_number])
      changed.push_back("the handler of signal " + std::to_string(signal_number) + " changed");
  for (const std::string& what : changed) std::printf("before main: %s\n", what.c_str());
  if (changed.empty()) std::printf("before main: nothing changed\n");
  return changed.empty() ? 0 : 1;
}

// ---- the worlds -------------------------------------------------------------------

ringlab::ProcessGroupOptions quick() {
  ringlab::ProcessGroupOptions group;
  group.timeout = std::chrono::milliseconds(20000);
  return group;
}

int twice() {
  std::printf("before the worlds\n");  // stdout is a pipe here: still in the buffer
  ringlab::backends::run_ranks(
      "tcp", 2, [](ringlab::ProcessGroup& pg) { std::printf("world 1 rank %d\n", pg.rank()); },
      quick());
  std::printf("between the worlds\n");
  ringlab::backends::run_ranks(
      "tcp", 3,
      [](ringlab::ProcessGroup& pg) {
        pg.barrier();
        std::printf("world 2 rank %d\n", pg.rank());
      },
      quick());
  std::printf("after the worlds\n");
  return 0;
}

int fail() {
  try {
    ringlab::backends::run_ranks(
        "tcp", 4,
        [](ringlab::ProcessGroup& pg) {
          if (pg.rank() == 2) throw std::runtime_error("rank 2: deliberate failure");
          auto tensor = ringlab::Tensor::arange(4);
          pg.all_reduce(tensor);  // the others wait for rank 2 here
        },
        quick());
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
    return 3;
  }
  std::printf("run_ranks returned\n");
  return 0;
}

int killed() {
  try {
    ringlab::backends::run_ranks(
        "tcp", 3,
        [](ringlab::ProcessGroup& pg) {
          if (pg.rank() == 1) ::raise(SIGKILL);
          pg.barrier();
        },
        quick());
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
    return 3;
  }
  return 0;
}

int hang() {
  const auto start = std::chrono::steady_clock::now();
  ringlab::ProcessGroupOptions group;
  group.timeout = std::chrono::milliseconds(1500);
  try {
    ringlab::backends::run_ranks(
        "tcp", 4,
        [](ringlab::ProcessGroup& pg) {
          if (pg.rank() == 3) std::this_thread::sleep_for(std::chrono::seconds(60));
          auto tensor = ringlab::Tensor::arange(4);
          pg.all_reduce(tensor);
        },
        group);
  } catch (const std::exception& e) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("caught after %.0f s: %s\n", seconds, e.what());
    return 3;
  }
  return 0;
}

int answers() {
  for (const char* backend : {"tcp", "inproc"}) {
    const std::vector<std::string> got = ringlab::backends::run_ranks_collecting(
        backend, 3,
        [](ringlab::ProcessGroup& pg) {
          pg.barrier();
          if (pg.rank() == 1) return std::string(1 << 20, 'x');
          const char* rank = std::getenv("RANK");
          return "rank " + std::to_string(pg.rank()) + " RANK=" + (rank ? rank : "unset") +
                 " RINGLAB_JOB_TOKEN " + (std::getenv("RINGLAB_JOB_TOKEN") ? "set" : "unset");
        },
        quick());
    for (std::size_t r = 0; r < got.size(); ++r)
      std::printf("%s answer %zu: %s\n", backend, r,
                  got[r].size() > 100 ? (std::to_string(got[r].size()) + " bytes").c_str()
                                      : got[r].c_str());
  }
  return 0;
}

int threaded() {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::thread waiting([&] {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return done; });
  });
  const auto world = [] {
    ringlab::backends::run_ranks(
        "tcp", 2, [](ringlab::ProcessGroup& pg) { std::printf("rank %d ran\n", pg.rank()); },
        quick());
  };
  try {
    world();
    std::printf("run_ranks forked while 2 threads ran\n");
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
  }
  {
    const std::lock_guard lock(mutex);
    done = true;
  }
  changed.notify_one();
  waiting.join();
  world();
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "before_main") return before_main();
  if (mode == "twice") return twice();
  if (mode == "fail") return fail();
  if (mode == "killed") return killed();
  if (mode == "hang") return hang();
  if (mode == "answers") return answers();
  if (mode == "threaded") return threaded();
  std::fprintf(stderr, "own_ranks: unknown mode '%s'\n", mode.c_str());
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "own_ranks: %s\n", e.what());
  return 1;
}
