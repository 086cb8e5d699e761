// Everything a program under check starts, kept where it can be ended: the
// learner's function may fork, detach (setsid, a double fork) or allocate
// without bound, and none of it may outlive the check or take the machine.
//
// - Its own process group, which the terminal's Ctrl-C does not reach: the
//   checker ends it (run.hpp) and everything below.
// - A cgroup of its own where this machine lets us make one (cgroup v2
//   mounted at /sys/fs/cgroup, our cgroup writable): every descendant stays
//   in it however it detaches, cgroup.kill ends them all, and memory.max
//   caps them where the memory controller is ours to use.
// - Otherwise, and always as well: the checker is a child subreaper
//   (PR_SET_CHILD_SUBREAPER), so a process whose parent dies is handed to it
//   rather than to init, and once the program ends every such orphan is
//   killed and reaped, until none is left.
// - RLIMIT_DATA on every process: an allocation past it fails in the
//   allocating rank (std::bad_alloc), which the exercise's program reports.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace ringlab::exercises {

class Containment {
 public:
  // memory_bytes: RLIMIT_DATA and memory.max for the program (0: no cap).
  explicit Containment(std::uint64_t memory_bytes);
  ~Containment();  // ends whatever is still running, removes the cgroup
  Containment(const Containment&) = delete;
  Containment& operator=(const Containment&) = delete;

  // In the forked child, before it executes the program: only
  // async-signal-safe calls. Its own process group, the cgroup, the limit.
  void enter() const noexcept;
  // In the parent, once fork returned `pid`.
  void adopt(pid_t pid);
  // Kills the program's process group, its cgroup, and every orphan it left
  // with us, and reaps the orphans (not `keep`, the program, which the
  // caller waits for); returns once none is left (or after 10 s).
  void end_all(pid_t keep);
  // Whether the cgroup's memory.max ended a process (memory.events).
  bool out_of_memory() const;
  // "a cgroup" or "a subreaper": how descendants are kept, for messages.
  std::string how() const;

 private:
  std::uint64_t memory_bytes_;
  std::optional<std::string> cgroup_;  // its folder, where one was made
  int cgroup_procs_fd_ = -1;           // its cgroup.procs, open for the child
  pid_t group_ = -1;
  std::set<pid_t> children_before_;    // ours before the program started: not its orphans
  int was_subreaper_ = 0;
};

}  // namespace ringlab::exercises
