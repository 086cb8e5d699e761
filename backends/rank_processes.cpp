#include "backends/rank_processes.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ringlab::backends {

namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// One anonymous in-memory file per rank for what it hands back: written by
// the rank (a fork, which inherits the descriptors), read by the caller once
// the rank has ended.
class AnswerFiles {
 public:
  explicit AnswerFiles(int world) {
    for (int rank = 0; rank < world; ++rank) {
      const int fd = ::memfd_create(("ringlab-rank" + std::to_string(rank)).c_str(), MFD_CLOEXEC);
      if (fd < 0) throw std::runtime_error(system_error("cannot make room for the ranks' answers"));
      fds_.push_back(fd);
    }
  }
  ~AnswerFiles() {
    for (int fd : fds_) ::close(fd);
  }
  AnswerFiles(const AnswerFiles&) = delete;
  AnswerFiles& operator=(const AnswerFiles&) = delete;

  void write(int rank, const std::string& answer) const {
    for (std::size_t done = 0; done < answer.size();) {
      const ssize_t n = ::write(fds_.at(static_cast<std::size_t>(rank)), answer.data() + done,
                                answer.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error(system_error("rank " + std::to_string(rank) +
                                                       ": cannot hand its answer back"));
      done += static_cast<std::size_t>(n);
    }
  }

  std::string read(int rank) const {
    const int fd = fds_.at(static_cast<std::size_t>(rank));
    std::string answer;
    char buffer[65536];
    for (off_t at = 0;;) {
      const ssize_t n = ::pread(fd, buffer, sizeof buffer, at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error(system_error("cannot read rank " + std::to_string(rank) +
                                                       "'s answer"));
      if (n == 0) return answer;
      answer.append(buffer, static_cast<std::size_t>(n));
      at += n;
    }
  }

 private:
  std::vector<int> fds_;
};

const char* variable(const launch::RankVariables& variables, const char* name) {
  // The last one of a name wins, as in the environment an executed rank gets.
  for (auto it = variables.rbegin(); it != variables.rend(); ++it)
    if (it->first == name) return it->second.c_str();
  return nullptr;
}

int number(const launch::RankVariables& variables, const char* name) {
  const char* value = variable(variables, name);
  if (!value) throw std::logic_error(std::string("the launcher gave the rank no ") + name);
  return std::atoi(value);
}

// What torchrun's workers find in their environment (RANK, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT, ...), a program's own code may read, as the
// articles' programs do: the launcher's variables but ringlab's own, which
// reach the rank only through RankStart. In the child, which runs one thread.
void set_torchrun_variables(const launch::RankVariables& variables) {
  for (const auto& [name, value] : variables)
    if (!name.starts_with("RINGLAB_")) ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace

RankStart::RankStart(const launch::RankVariables& variables)
    : rank(number(variables, "RANK")),
      world_size(number(variables, "WORLD_SIZE")),
      variables_(variables) {}

const char* RankStart::get(const char* name) const {
  if (const char* value = variable(variables_, name)) return value;
  return std::getenv(name);
}

std::function<const char*(const char*)> RankStart::lookup() const {
  return [this](const char* name) { return get(name); };
}

RankProcesses run_rank_processes(int world, const RankProcessOptions& options,
                                 const RankMain& rank_main) {
  const AnswerFiles answers(options.answers ? world : 0);
  launch::LaunchOptions launch_options;
  launch_options.name = options.name;
  launch_options.nproc_per_node = world;
  // In each child (launcher/spawn.hpp, spawn_forked): this rank's work, its
  // answer handed back; the child ends when this returns.
  launch_options.rank_entry = [&](const launch::RankVariables& variables) {
    set_torchrun_variables(variables);
    const RankStart start(variables);
    const std::string answer = rank_main(start);
    if (options.answers) answers.write(start.rank, answer);
    return 0;
  };
  RankProcesses result;
  result.launch = options.trace ? launch_traced(launch_options, *options.trace, result.traced)
                                : launch::launch(launch_options);
  for (int rank = 0; options.answers && rank < world; ++rank) {
    const launch::RankExit& exit = result.launch.ranks.at(static_cast<std::size_t>(rank));
    result.answers.push_back(exit.failed() ? std::string() : answers.read(rank));
  }
  return result;
}

}  // namespace ringlab::backends
