// The paced tour (`ringlab tour` with a terminal on stdin) through a
// pseudo-terminal, typed at as a learner types: a header, two lines on what
// to look at, the lesson, its "try:" line and the prompt; Enter for the next
// lesson, n and a world size to run it again, q to quit. Piped, the tour
// shows none of that.
#include <doctest/doctest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "run_program.hpp"

namespace {

constexpr const char* kPrompt = "[Enter] next lesson, n: again on another world size, q: quit > ";

// `ringlab ARGUMENTS` on the slave side of a pseudo-terminal.
class OnTerminal {
 public:
  explicit OnTerminal(const std::string& arguments) {
    pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c",
              (ringlab::testing::kCleanEnvironment + RINGLAB_EXE + " " + arguments).c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~OnTerminal() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }

  // Reads until `text` appears after what was read up to now (false: it did
  // not within 60 s, or the tour ended). Returns what was read meanwhile.
  std::string read_until(const std::string& text) {
    const std::size_t from = output_.size();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (output_.find(text, from) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || !read_some()) {
        FAIL("the tour never printed '" << text << "'; it printed:\n" << output_.substr(from));
        return output_.substr(from);
      }
    }
    return output_.substr(from);
  }
  const std::string& everything() const { return output_; }
  void type(const std::string& keys) {
    REQUIRE(::write(fd_, keys.data(), keys.size()) == ssize_t(keys.size()));
  }
  // Reads to the end (at most 120 s) and returns the exit status.
  int finish(std::string& rest) {
    const std::size_t from = output_.size();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (read_some() && std::chrono::steady_clock::now() < deadline) {
    }
    rest = output_.substr(from);
    if (std::chrono::steady_clock::now() >= deadline) ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  bool read_some() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) return true;  // nothing yet: keep waiting
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n <= 0) return false;  // the tour closed the terminal (EIO)
    output_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  std::string output_;
};

}  // namespace

TEST_CASE("the tour at a terminal: one lesson at a time, what to look at, try next, a prompt") {
  OnTerminal tour("tour --backend inproc --timeout-ms 20000");
  std::string shown = tour.read_until(kPrompt);
  CHECK(shown.find("# pingpong (world 2): send/recv") != std::string::npos);
  CHECK(shown.find("look: rank 0 sends tensor(1.) to rank 1") != std::string::npos);
  CHECK(shown.find("after recv, Rank  0  has data  tensor(2.)") != std::string::npos);
  CHECK(shown.find("try: ringlab lesson pingpong_async") != std::string::npos);
  CHECK(shown.find("# pingpong_async") == std::string::npos);  // it waits

  tour.type("\n");  // Enter: the next lesson
  shown = tour.read_until(kPrompt);
  CHECK(shown.find("# pingpong_async (world 2)") != std::string::npos);
  CHECK(shown.find("try: ringlab exercise start ping_pong") != std::string::npos);

  tour.type("\n");
  shown = tour.read_until(kPrompt);
  CHECK(shown.find("# broadcast (world 4)") != std::string::npos);
  CHECK(shown.find("look: after the call every rank holds the src rank's tensor([1, 2])") !=
        std::string::npos);

  // n: the same lesson on another world size; one it cannot use is refused.
  tour.type("n\n");
  tour.read_until("world size for broadcast (1-1024): ");
  tour.type("0\n");
  shown = tour.read_until("world size for broadcast (1-1024): ");
  CHECK(shown.find("a world size is a whole number from 1 to 1024") != std::string::npos);
  tour.type("6\n");
  shown = tour.read_until(kPrompt);
  CHECK(shown.find("# broadcast (world 6)") != std::string::npos);
  CHECK(shown.find("after broadcast  Rank  5  has data  tensor([1, 2])") != std::string::npos);
  CHECK(shown.find("try: ringlab lesson broadcast -n 8 --root 5") != std::string::npos);

  tour.type("q\n");  // q: the tour ends here
  std::string rest;
  CHECK(tour.finish(rest) == 0);
  CHECK(rest.find("# scatter") == std::string::npos);
}

TEST_CASE("piped, the tour runs every lesson without look, try or prompt lines") {
  const ringlab::testing::ProgramRun run =
      ringlab::testing::run_ringlab("tour --backend inproc --timeout-ms 20000 < /dev/null");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("# support (") != std::string::npos);  // the last lesson ran
  CHECK(run.output.find("look: ") == std::string::npos);
  CHECK(run.output.find("try: ") == std::string::npos);
  CHECK(run.output.find("[Enter]") == std::string::npos);
}

TEST_CASE(
    "at a terminal a lesson ends with what to try next; its output read by a program does not") {
  OnTerminal lesson("lesson reduce --backend inproc");
  std::string rest;
  CHECK(lesson.finish(rest) == 0);
  INFO(lesson.everything());
  CHECK(lesson.everything().find("after reudce") != std::string::npos);
  CHECK(lesson.everything().ends_with("try: ringlab lesson reduce -n 6 --root 2\r\n"));
  // stdout and stderr both read by a program, as the article comparisons read them.
  const ringlab::testing::ProgramRun piped =
      ringlab::testing::run_ringlab("lesson reduce --backend inproc");
  CHECK(piped.status == 0);
  CHECK(piped.output.find("try:") == std::string::npos);
}
