// A store served by another process (tests/store_host.cpp), and what a test
// can read of that process from /proc: whether it lives, its resident memory,
// its CPU time.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ringlab::store::testing {

class ChildStore {
 public:
  // Starts STORE_HOST_EXE with `options` and waits for its "port P" line.
  explicit ChildStore(const std::vector<std::string>& options) {
    int to_child[2], from_child[2];
    REQUIRE(::pipe2(to_child, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(from_child, O_CLOEXEC) == 0);
    std::vector<std::string> arguments{STORE_HOST_EXE};
    arguments.insert(arguments.end(), options.begin(), options.end());
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(to_child[0], 0);
      ::dup2(from_child[1], 1);
      ::close_range(3, ~0u, 0);  // none of the test's sockets
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_ = to_child[1];
    FILE* out = ::fdopen(from_child[0], "r");
    REQUIRE(out);
    char line[64] = {};
    const bool got = std::fgets(line, sizeof line, out) != nullptr;
    std::fclose(out);
    REQUIRE_MESSAGE(got, "store_host printed no port");
    REQUIRE(std::sscanf(line, "port %d", &port_) == 1);
  }
  ~ChildStore() {
    ::close(stdin_);
    if (!reaped_) {
      int status = 0;
      for (int i = 0; i < 200 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(10000);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
  }
  ChildStore(const ChildStore&) = delete;
  ChildStore& operator=(const ChildStore&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // False once the process has ended (it is reaped then; `ended` says how).
  bool alive() {
    if (reaped_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
    reaped_ = true;
    ended_ = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                 : "exited with status " + std::to_string(WEXITSTATUS(status));
    return false;
  }
  const std::string& ended() const { return ended_; }

  // VmRSS, in KiB.
  long long resident_kib() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
    return -1;
  }
  // User + system CPU time, in seconds.
  double cpu_seconds() const {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // Fields after the command name (which may hold spaces) in parentheses.
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    long long utime = 0, stime = 0;
    for (int i = 3; fields >> field; ++i) {
      if (i == 14) utime = std::atoll(field.c_str());
      if (i == 15) {
        stime = std::atoll(field.c_str());
        break;
      }
    }
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int port_ = 0;
  bool reaped_ = false;
  std::string ended_;
};

}  // namespace ringlab::store::testing
