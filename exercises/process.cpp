#include "exercises/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "launcher/signal_pipe.hpp"
#include "launcher/spawn.hpp"

extern char** environ;

namespace ringlab::exercises {

namespace {

using Clock = std::chrono::steady_clock;

// In the child, from fork to execve: only async-signal-safe calls.
[[noreturn]] void become(const char* path, char* const* argv, const Containment& containment,
                         int output, const SpawnOptions& options) {
  for (int signal_number : {SIGCHLD, SIGINT, SIGTERM, SIGPIPE}) ::signal(signal_number, SIG_DFL);
  containment.enter();
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, 0);
  ::dup2(output, 1);
  ::dup2(output, 2);
  if (!options.folder.empty() && ::chdir(options.folder.c_str()) != 0) ::_exit(126);
  const int keep = options.keep_fd;
  if (keep >= 3) {
    ::fcntl(keep, F_SETFD, 0);  // survives execve
    ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
    ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
  } else {
    ::close_range(3, ~0U, 0);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(path, argv, environ);
  static constexpr char kFailed[] = "cannot execute the program (execve failed)\n";
  [[maybe_unused]] const ssize_t ignored = ::write(2, kFailed, sizeof kFailed - 1);
  ::_exit(127);
}

}  // namespace

std::string ProgramResult::describe() const {
  if (interrupted != 0) return "was stopped by " + std::string(::strsignal(interrupted));
  if (timed_out) return "did not finish in time and was stopped";
  if (out_of_memory) return "used more memory than the check allows and was stopped";
  if (signal_number != 0)
    return "was killed by signal " + std::to_string(signal_number) + " (" +
           ::strsignal(signal_number) + ")";
  return "exited with status " + std::to_string(exit_status);
}

Program::Program(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("run_program: no program");
  const std::string path = launch::resolve_program(argv[0]);
  std::vector<std::string> args = argv;
  std::vector<char*> pointers;
  for (std::string& a : args) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error("cannot make a pipe for " + argv[0] + ": " + std::strerror(errno));
  containment_ = std::make_unique<Containment>(options.memory_bytes);
  sigset_t all, previous;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &previous);  // no handler of ours runs in the child
  pid_ = ::fork();
  if (pid_ == 0) become(path.c_str(), pointers.data(), *containment_, pipe_fds[1], options);
  const int fork_error = errno;
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  ::close(pipe_fds[1]);
  if (pid_ < 0) {
    ::close(pipe_fds[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(fork_error));
  }
  containment_->adopt(pid_);
  output_ = pipe_fds[0];
  ::fcntl(output_, F_SETFL, O_NONBLOCK);
}

Program::~Program() {
  if (!reaped_) stop();
  containment_->end_all(-1);
  if (output_ >= 0) ::close(output_);
}

bool Program::read_output(std::string& into) {
  if (output_ < 0) return false;
  char chunk[4096];
  while (true) {
    const ssize_t n = ::read(output_, chunk, sizeof chunk);
    if (n > 0) {
      into.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    ::close(output_);  // end of file, or an error: either way nothing more comes
    output_ = -1;
    return false;
  }
}

bool Program::exited() {
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  reaped_ = true;
  status_ = status;
  return true;
}

void Program::stop() {
  containment_->end_all(pid_);
  if (reaped_) return;
  while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

ProgramResult Program::finish() {
  if (!reaped_) stop();
  containment_->end_all(pid_);  // what it left running
  ProgramResult result;
  // Every writer is gone now; what they wrote is still in the pipe.
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  while (read_output(collected_) && Clock::now() < give_up) {
    pollfd p{output_, POLLIN, 0};
    ::poll(&p, 1, 50);
  }
  result.output = std::move(collected_);
  if (WIFEXITED(status_)) result.exit_status = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) result.signal_number = WTERMSIG(status_);
  result.out_of_memory = containment_->out_of_memory();
  return result;
}

struct Interrupts::Pipe {
  launch::SignalPipe signals;
};

Interrupts::Interrupts() : pipe_(std::make_unique<Pipe>()) {}
Interrupts::~Interrupts() = default;
int Interrupts::read_end() const { return pipe_->signals.read_end(); }
int Interrupts::received() {
  if (const int signal_number = pipe_->signals.drain()) received_ = signal_number;
  return received_;
}

ProgramResult run_program(const std::vector<std::string>& argv, std::chrono::seconds limit,
                          const std::string& folder,
                          const std::function<void(std::string_view)>& on_output) {
  Interrupts interrupts;
  Program program(argv, {.folder = folder});
  const auto deadline = Clock::now() + limit;
  std::string output;
  bool timed_out = false;
  while (!program.exited()) {
    pollfd p[2] = {{interrupts.read_end(), POLLIN, 0}, {program.output_fd(), POLLIN, 0}};
    ::poll(p, program.output_fd() >= 0 ? 2 : 1, 100);  // SIGCHLD wakes it too
    const std::size_t before = output.size();
    program.read_output(output);
    if (on_output && output.size() > before) on_output(std::string_view(output).substr(before));
    if (interrupts.received() || Clock::now() >= deadline) {
      timed_out = !interrupts.received();
      program.stop();
      break;
    }
  }
  ProgramResult result = program.finish();
  if (on_output && !result.output.empty()) on_output(result.output);
  result.output = output + result.output;
  result.timed_out = timed_out;
  result.interrupted = interrupts.received();
  return result;
}

}  // namespace ringlab::exercises
