#include "tools/lesson_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace ringlab::cli {

namespace {

// This program, to run a lesson as `ringlab lesson`.
std::string this_program() {
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) throw std::runtime_error("cannot tell where this ringlab program is");
  return std::string(path, static_cast<std::size_t>(length));
}

// `ringlab lesson NAME` with the options that matter to a run of it.
std::vector<std::string> lesson_command(const lessons::Lesson& lesson,
                                        const lessons::RunOptions& options) {
  std::vector<std::string> args{this_program(), "lesson", std::string(lesson.name), "--timeout-ms",
                                std::to_string(options.group.timeout.count())};
  if (options.world_size > 0) args.insert(args.end(), {"-n", std::to_string(options.world_size)});
  if (!lesson.run_itself && !options.backend.empty())
    args.insert(args.end(), {"--backend", options.backend});
  for (const auto& [collective, name] : options.group.algorithms)
    args.insert(args.end(), {"--algorithm", std::string(collective_name(collective)) + "=" + name});
  return args;
}

// Starts args with stdin /dev/null and, when stdout_to >= 0, stdout there.
pid_t spawn(std::vector<std::string> args, int stdout_to) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (stdout_to >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_to, 1);
  std::fflush(stdout);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(error));
  return pid;
}

// Waits for pid; true when it exited with status 0.
bool succeeded(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Everything readable from fd until its end, or until the deadline (false).
bool read_all(int fd, std::string& into, std::chrono::steady_clock::time_point deadline) {
  char chunk[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // the end: every writer has closed it
    into.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace

void run_lesson_process(const lessons::Lesson& lesson, const lessons::RunOptions& options) {
  if (!succeeded(spawn(lesson_command(lesson, options), -1)))
    std::printf("(the lesson failed: its error is above)\n");
}

std::string lesson_output(const lessons::Lesson& lesson, const lessons::RunOptions& options,
                          long long limit_ms) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  pid_t pid = -1;
  try {
    pid = spawn(lesson_command(lesson, options), ends[1]);
  } catch (...) {
    ::close(ends[0]);
    ::close(ends[1]);
    throw;
  }
  ::close(ends[1]);
  std::string output;
  const bool ended = read_all(ends[0], output,
                              std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms));
  ::close(ends[0]);
  if (!ended) ::kill(pid, SIGKILL);
  const bool ok = succeeded(pid);
  const std::string name(lesson.name);
  if (!ended)
    throw std::runtime_error("lesson " + name + " ran past " + std::to_string(limit_ms / 1000) +
                             " s and was stopped; try a smaller --timeout-ms, or leave out "
                             "--article to see it run");
  if (!ok) throw std::runtime_error("lesson " + name + " failed (its error is above)");
  return output;
}

}  // namespace ringlab::cli
