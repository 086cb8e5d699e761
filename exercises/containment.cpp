#include "exercises/containment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace ringlab::exercises {

namespace {

constexpr long kCgroup2Magic = 0x63677270;  // CGROUP2_SUPER_MAGIC (linux/magic.h)
constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// Our cgroup's folder, where /sys/fs/cgroup is the unified hierarchy.
std::optional<std::string> own_cgroup() {
  struct statfs fs {};
  if (::statfs(kCgroupRoot, &fs) != 0 || fs.f_type != kCgroup2Magic) return std::nullopt;
  std::istringstream lines(read_text("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) return std::string(kCgroupRoot) + line.substr(3);
  return std::nullopt;
}

// A cgroup below ours for one program, or nothing where we may not make one.
std::optional<std::string> make_cgroup(std::uint64_t memory_bytes) {
  const std::optional<std::string> parent = own_cgroup();
  if (!parent) return std::nullopt;
  static int made = 0;
  const std::string folder = *parent + "/ringlab-check-" + std::to_string(::getpid()) + "-" +
                             std::to_string(++made);
  if (::mkdir(folder.c_str(), 0755) != 0) return std::nullopt;
  // memory.max exists only where the memory controller is delegated to us;
  // RLIMIT_DATA caps each process either way.
  if (memory_bytes > 0 && ::access((folder + "/memory.max").c_str(), W_OK) == 0)
    write_text(folder + "/memory.max", std::to_string(memory_bytes));
  return folder;
}

// The pids whose parent is `parent` (scanning /proc: the children file of
// each thread needs CONFIG_PROC_CHILDREN).
std::set<pid_t> children_of(pid_t parent) {
  std::set<pid_t> children;
  DIR* proc = ::opendir("/proc");
  if (!proc) return children;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    const std::string stat = read_text("/proc/" + std::string(entry->d_name) + "/stat");
    const std::size_t close = stat.rfind(')');  // the command may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (fields >> state >> ppid && ppid == parent) children.insert(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return children;
}

std::set<pid_t> pids_in(const std::string& cgroup) {
  std::set<pid_t> pids;
  std::istringstream in(read_text(cgroup + "/cgroup.procs"));
  for (long pid; in >> pid;) pids.insert(static_cast<pid_t>(pid));
  return pids;
}

}  // namespace

Containment::Containment(std::uint64_t memory_bytes)
    : memory_bytes_(memory_bytes), children_before_(children_of(::getpid())) {
  ::prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper_);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  cgroup_ = make_cgroup(memory_bytes);
  if (cgroup_) cgroup_procs_fd_ = ::open((*cgroup_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
}

Containment::~Containment() {
  end_all(-1);
  if (cgroup_procs_fd_ >= 0) ::close(cgroup_procs_fd_);
  if (cgroup_) ::rmdir(cgroup_->c_str());
  ::prctl(PR_SET_CHILD_SUBREAPER, was_subreaper_);
}

void Containment::enter() const noexcept {
  ::setpgid(0, 0);
  // The program dies with the checker (its descendants are the cgroup's, or
  // go to init: nothing more can be done once the checker itself is killed).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (cgroup_procs_fd_ >= 0) {
    [[maybe_unused]] const ssize_t ignored = ::write(cgroup_procs_fd_, "0\n", 2);
  }
  if (memory_bytes_ > 0) {
    const rlimit limit{memory_bytes_, memory_bytes_};
    ::setrlimit(RLIMIT_DATA, &limit);
  }
}

void Containment::adopt(pid_t pid) {
  group_ = pid;
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before any kill
}

void Containment::end_all(pid_t keep) {
  if (group_ > 0) ::kill(-group_, SIGKILL);
  if (cgroup_ && !write_text(*cgroup_ + "/cgroup.kill", "1"))
    for (pid_t pid : pids_in(*cgroup_)) ::kill(pid, SIGKILL);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < give_up) {
    bool left = false;
    if (cgroup_)
      for (pid_t pid : pids_in(*cgroup_)) left = left || pid != keep;  // keep: the caller reaps it
    for (pid_t pid : children_of(::getpid())) {
      if (pid == keep || children_before_.count(pid)) continue;
      ::kill(pid, SIGKILL);  // an orphan handed to us: its own children come next round
      if (::waitpid(pid, nullptr, WNOHANG) != pid) left = true;
    }
    if (!left) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Containment::out_of_memory() const {
  if (!cgroup_) return false;
  std::istringstream events(read_text(*cgroup_ + "/memory.events"));
  std::string name;
  long count = 0;
  while (events >> name >> count)
    if (name == "oom_kill" && count > 0) return true;
  return false;
}

std::string Containment::how() const { return cgroup_ ? "a cgroup" : "a subreaper"; }

}  // namespace ringlab::exercises
