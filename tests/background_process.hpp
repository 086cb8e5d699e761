// For tests that run several programs at once (elastic agents): a command in
// the background with its output in a file, waited on with timeouts, and the
// process table searched for anything left running.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ringlab::testing {

// A folder for a test's files, removed with them.
struct TemporaryFolder {
  std::string path;
  TemporaryFolder() {
    char name[] = "/tmp/ringlab-elastic-XXXXXX";
    REQUIRE(::mkdtemp(name));
    path = name;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `sh -c "exec COMMAND"`: the pid is the command's own, stdout and stderr go
// to output_path. Killed (SIGKILL) when the object goes, if still running.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::string& command, std::string output_path)
      : output_path_(std::move(output_path)) {
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const std::string line = "exec " + command + " >" + output_path_ + " 2>&1";
      ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~BackgroundProcess() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string output() const { return read_file(output_path_); }
  bool running() {
    if (exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
    record(status);
    return false;
  }
  void signal(int number) { ::kill(pid_, number); }

  // Waits until the output satisfies done (true) or the time runs out (false).
  bool wait_for(const std::function<bool(const std::string&)>& done,
                std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done(output())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done(output());
  }
  bool wait_for(const std::string& text, std::chrono::milliseconds limit) {
    return wait_for([&](const std::string& out) { return out.find(text) != std::string::npos; },
                    limit);
  }
  // The exit status (128 + N for signal N), or -1 if it is still running after limit.
  int wait_exit(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (running()) {
      if (std::chrono::steady_clock::now() >= deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status_;
  }

 private:
  void record(int status) {
    exited_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pid_t pid_ = -1;
  std::string output_path_;
  bool exited_ = false;
  int status_ = -1;
};

// The processes (not zombies) whose command line mentions marker, as "pid
// (state, parent ppid): command line", other than this one.
inline std::vector<std::string> processes_mentioning(const std::string& marker) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(name) == ::getpid()) continue;
    std::string command = read_file(entry.path().string() + "/cmdline");
    for (char& c : command)
      if (c == '\0') c = ' ';
    if (command.find(marker) == std::string::npos) continue;
    // /proc/PID/stat: "pid (name) S ppid ..."
    const std::string stat = read_file(entry.path().string() + "/stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = '?';
    int parent = 0;
    rest >> state >> parent;
    if (state == 'Z' || state == 'X') continue;
    found.push_back(name + " (" + state + ", parent " + std::to_string(parent) + "): " + command);
  }
  return found;
}

// Nothing mentioning marker left running, after up to `grace` for processes
// that are on their way out.
inline std::vector<std::string> left_running(const std::string& marker,
                                             std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  std::vector<std::string> found = processes_mentioning(marker);
  while (!found.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    found = processes_mentioning(marker);
  }
  return found;
}

}  // namespace ringlab::testing
