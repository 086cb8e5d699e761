// What the tests of files share (test_files, test_checkpoint_files): a
// temporary folder per case, the error an action throws, and the same run in
// a child process with a deadline, for actions that would hang if broken
// (reading a FIFO) or fill the memory (reading /dev/zero).
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace ringlab::testing {

namespace fs = std::filesystem;

// A temporary folder for one test case, removed with what it holds.
struct Folder {
  fs::path path;
  Folder() {
    std::string name = (fs::temp_directory_path() / "ringlab-files-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

inline std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void put(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline mode_t type_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

// The message of the std::runtime_error `action` throws ("" if none).
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The error of `action` run in a child process that is killed after
// `seconds`: "TIMEOUT" if it hung there. A broken reader of a FIFO or of
// /dev/zero would otherwise hang (or fill the memory of) the test itself.
inline std::string error_within(double seconds, const std::function<void()>& action) {
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_ends[0]);
    const std::string error = error_of(action);
    (void)!::write(pipe_ends[1], error.data(), error.size());
    ::_exit(0);
  }
  ::close(pipe_ends[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ::close(pipe_ends[0]);
      return "TIMEOUT";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string error;
  char chunk[4096];
  for (ssize_t n; (n = ::read(pipe_ends[0], chunk, sizeof chunk)) > 0;) error.append(chunk, n);
  ::close(pipe_ends[0]);
  return error;
}

// Temporary files of the atomic writer for `name` in `folder`.
inline std::size_t temporaries_left(const fs::path& folder, const std::string& name) {
  std::size_t found = 0;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().filename().string().starts_with("." + name + ".tmp-")) ++found;
  return found;
}

}  // namespace ringlab::testing
