#include "launcher/capacity.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ringlab::launch {

namespace {

// Descriptors kept for the launcher besides the ranks' (the signal pipe, the
// store's sockets, a trace or error file, the two ends of a pipe being made).
constexpr long long kLauncherDescriptors = 32;
// Processes kept for everything else that may start meanwhile.
constexpr long long kSpareProcesses = 64;

struct Tasks {
  long long all = 0;      // tasks (threads) on the machine: each holds a pid
  long long of_user = 0;  // of this process's real user
};

Tasks count_tasks() {
  Tasks tasks;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    long long threads = 0;
    bool mine = false;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) == 0) {
        long long real_uid = -1;  // "Uid:\treal\teffective\tsaved\tfs"
        std::istringstream(line.substr(4)) >> real_uid;
        mine = real_uid == static_cast<long long>(::getuid());
      } else if (line.rfind("Threads:", 0) == 0) {
        threads = std::atoll(line.c_str() + 8);
      }
    }
    tasks.all += threads;
    if (mine) tasks.of_user += threads;
  }
  return tasks;
}

long long read_number(const std::string& path) {
  std::ifstream in(path);
  long long value = -1;
  return in >> value ? value : -1;
}

long long open_descriptors() {
  std::error_code error;
  long long count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    ++count;
  return count;
}

// Keeps the smaller of the capacity so far and `ranks`, with its reason.
void bound(RankCapacity& capacity, long long ranks, std::string limit, std::string raise) {
  ranks = std::clamp<long long>(ranks, 0, INT_MAX);
  if (ranks >= capacity.ranks) return;
  capacity = {static_cast<int>(ranks), std::move(limit), std::move(raise)};
}

}  // namespace

RankCapacity rank_capacity(bool log_files) {
  RankCapacity capacity{INT_MAX, "", ""};
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    const long long per_rank = log_files ? 4 : 2;
    const long long in_use = open_descriptors();
    const long long soft = static_cast<long long>(files.rlim_cur);
    bound(capacity, (soft - in_use - kLauncherDescriptors) / per_rank,
          "RLIMIT_NOFILE allows this process " + std::to_string(soft) + " open files (" +
              std::to_string(in_use) + " open now, " + std::to_string(kLauncherDescriptors) +
              " kept for the launcher), and each rank needs " + std::to_string(per_rank) +
              (log_files ? " (its stdout and stderr pipes and log files)"
                         : " (its stdout and stderr pipes)"),
          "raise it with ulimit -n (up to the hard limit, " +
              (files.rlim_max == RLIM_INFINITY ? std::string("unlimited")
                                               : std::to_string(files.rlim_max)) +
              ")");
  }
  const Tasks tasks = count_tasks();
  if (const long long pid_max = read_number("/proc/sys/kernel/pid_max"); pid_max > 0)
    bound(capacity, pid_max - tasks.all - kSpareProcesses,
          "the kernel has " + std::to_string(pid_max) + " process ids (kernel.pid_max), " +
              std::to_string(tasks.all) + " in use and " + std::to_string(kSpareProcesses) +
              " kept spare, and each rank is a process",
          "raise kernel.pid_max (sysctl)");
  if (const long long threads_max = read_number("/proc/sys/kernel/threads-max"); threads_max > 0)
    bound(capacity, threads_max - tasks.all - kSpareProcesses,
          "the kernel allows " + std::to_string(threads_max) + " tasks (kernel.threads-max), " +
              std::to_string(tasks.all) + " in use and " + std::to_string(kSpareProcesses) +
              " kept spare, and each rank is a process",
          "raise kernel.threads-max (sysctl)");
  rlimit processes{};
  if (::getuid() != 0 && ::getrlimit(RLIMIT_NPROC, &processes) == 0 &&
      processes.rlim_cur != RLIM_INFINITY) {
    const long long soft = static_cast<long long>(processes.rlim_cur);
    bound(capacity, soft - tasks.of_user - kSpareProcesses,
          "RLIMIT_NPROC allows this user " + std::to_string(soft) + " processes (" +
              std::to_string(tasks.of_user) + " running now, " + std::to_string(kSpareProcesses) +
              " kept spare), and each rank is one",
          "raise it with ulimit -u");
  }
  return capacity;
}

void check_rank_capacity(int nproc_per_node, bool log_files) {
  const RankCapacity capacity = rank_capacity(log_files);
  if (nproc_per_node <= capacity.ranks) return;
  throw std::invalid_argument(
      "--nproc-per-node " + std::to_string(nproc_per_node) + " is more ranks than this machine " +
      "lets one launcher start: at most " + std::to_string(capacity.ranks) + " here, because " +
      capacity.limit + "; lower --nproc-per-node, or " + capacity.raise);
}

}  // namespace ringlab::launch
