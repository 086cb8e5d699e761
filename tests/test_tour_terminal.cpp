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
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_program.hpp"

namespace {

constexpr const char* kPrompt = "[Enter] next lesson, n: again on another world size, q: quit > ";

// `ringlab ARGUMENTS` on the slave side of a pseudo-terminal.
class OnTerminal {
 public:
  // environment: "env -u VAR " and the like, before ringlab's clean one.
  explicit OnTerminal(const std::string& arguments, const std::string& environment = "") {
    const std::string command =
        environment + ringlab::testing::kCleanEnvironment + RINGLAB_EXE + " " + arguments;
    pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
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
  const std::string ask = "world size for broadcast (1-1024; Enter: back, q: quit): ";
  tour.type("n\n");
  tour.read_until(ask);
  tour.type("0\n");
  shown = tour.read_until(ask);
  CHECK(shown.find("a world size is a whole number: 1-1024 for broadcast") != std::string::npos);
  tour.type("6\n");
  shown = tour.read_until(kPrompt);
  CHECK(shown.find("# broadcast (world 6)") != std::string::npos);
  CHECK(shown.find("after broadcast  Rank  5  has data  tensor([1, 2])") != std::string::npos);
  CHECK(shown.find("try: ringlab lesson broadcast -n 8 --root 5") != std::string::npos);

  // n, then Enter: back to the prompt, nothing runs again.
  tour.type("n\n");
  tour.read_until(ask);
  tour.type("\n");
  shown = tour.read_until(kPrompt);
  CHECK(shown.find("# broadcast") == std::string::npos);

  tour.type("q\n");  // q: the tour ends here, saying how to go on
  std::string rest;
  CHECK(tour.finish(rest) == 0);
  CHECK(rest.find("# scatter") == std::string::npos);
  CHECK(rest.find("you left the tour after broadcast; to go on from scatter: ringlab tour --from "
                  "scatter --backend inproc") != std::string::npos);
}

TEST_CASE("n names the world sizes a lesson can use; where there is one, it says so and asks not") {
  OnTerminal tour("tour --backend inproc --timeout-ms 20000");
  tour.read_until(kPrompt);
  tour.type("n\n");  // pingpong: 2 ranks only
  std::string shown = tour.read_until(kPrompt);
  CHECK(shown.find("pingpong runs on 2 ranks only: the article's ping-pong passes a tensor "
                   "between rank 0 and rank 1") != std::string::npos);
  CHECK(shown.find("world size for") == std::string::npos);
  CHECK(shown.find("# pingpong") == std::string::npos);  // not run again
  tour.type("q\n");
  std::string rest;
  CHECK(tour.finish(rest) == 0);
  CHECK(rest.find("to go on from pingpong_async: ringlab tour --from pingpong_async --backend "
                  "inproc") != std::string::npos);

  // ddp_grad_average's four samples split over 1, 2 or 4 ranks; q at the
  // world size quits the tour.
  OnTerminal grad("tour --from ddp_grad_average --backend inproc --timeout-ms 20000");
  shown = grad.read_until(kPrompt);
  CHECK(shown.find("# ddp_grad_average (world 2, then 4)") != std::string::npos);
  CHECK(shown.find("# ddp_init_broadcast") == std::string::npos);  // started where asked
  grad.type("n\n");
  grad.read_until("world size for ddp_grad_average (1, 2 or 4; Enter: back, q: quit): ");
  grad.type("3\n");
  shown = grad.read_until("world size for ddp_grad_average (1, 2 or 4; Enter: back, q: quit): ");
  CHECK(shown.find("not on 3 ranks: the four samples") != std::string::npos);
  grad.type("q\n");
  CHECK(grad.finish(rest) == 0);
  CHECK(rest.find("to go on from ddp_basic: ringlab tour --from ddp_basic --backend inproc") !=
        std::string::npos);
}

namespace {

// The numbered lines that follow the line holding `heading` ("  1. ringlab
// lesson all_reduce   the article's ..."), without the terminal's \r.
std::vector<std::string> steps_after(const std::string& text, const std::string& heading) {
  std::vector<std::string> steps;
  const std::size_t at = text.find(heading);
  if (at == std::string::npos) return steps;
  std::istringstream lines(text.substr(text.find('\n', at) + 1));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() < 5 || !line.starts_with("  ") || line[3] != '.') break;
    steps.push_back(line);
  }
  return steps;
}

// "ringlab lesson all_reduce" of "  1. ringlab lesson all_reduce   the ...".
std::string command_of(const std::string& step) {
  const std::size_t from = step.find("ringlab ");
  return step.substr(from, step.find("  ", from) - from);
}

}  // namespace

TEST_CASE("one path to start: README's first screen, ringlab start and the tour's end agree") {
  // ringlab start without a display prints the steps, then runs the tour.
  OnTerminal start("start --backend inproc --timeout-ms 20000", "env -u DISPLAY -u WAYLAND_DISPLAY ");
  const std::string opening = start.read_until(kPrompt);
  const auto steps = steps_after(opening, "start here");
  REQUIRE(steps.size() == 3);
  CHECK(command_of(steps[0]) == "ringlab lesson all_reduce");
  CHECK(command_of(steps[1]) == "ringlab gui --scenario ring_allreduce");
  CHECK(command_of(steps[2]) == "ringlab exercise start ring_all_reduce");
  start.type("q\n");
  std::string rest;
  CHECK(start.finish(rest) == 0);

  // The tour, at its end, names the same steps, word for word.
  OnTerminal tour("tour --from support --backend inproc --timeout-ms 20000");
  tour.read_until(kPrompt);
  tour.type("\n");
  CHECK(tour.finish(rest) == 0);
  INFO(rest);
  CHECK(steps_after(rest, "what next") == steps);
  CHECK(rest.find("go on from") == std::string::npos);

  // README's first screen (its first 40 lines) gives them, in order, as
  // commands of the build tree's $ringlab.
  std::ifstream file(RINGLAB_SOURCE_DIR "/README.md");
  std::string readme, line;
  for (int n = 0; n < 40 && std::getline(file, line); ++n) readme += line + "\n";
  std::size_t previous = 0;
  for (const std::string& step : steps) {
    const std::size_t at = readme.find("$" + command_of(step) + " ");
    CAPTURE(step);
    CHECK(at != std::string::npos);
    CHECK(at >= previous);
    previous = at;
  }
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
