// Starting one rank: its program found on PATH, its environment, and the
// fork/exec that gives it pipes for stdout and stderr, its own process group,
// and death when the launcher dies.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace ringlab::launch {

// The program's path, looked up on PATH before forking (execve in the child
// then needs no allocation). Throws std::invalid_argument when there is no
// such program.
std::string resolve_program(const std::string& program);

// The parent's environment with `ours` replacing any variable of the same name.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& ours);

struct SpawnedChild {
  pid_t pid = -1;
  int stdout_fd = -1;  // read ends of the child's stdout and stderr
  int stderr_fd = -1;
};

// Forks and executes path with argv and environment. The child is the leader
// of its own process group (so stopping it stops what it started), gets
// SIGKILL if the launcher dies, and inherits no descriptor but 0, 1 and 2.
// Throws std::runtime_error naming `what` ("rank 3") when the pipes or the
// fork fail; a failed execve shows as exit status 127.
SpawnedChild spawn(const std::string& path, std::vector<std::string> argv,
                   std::vector<std::string> environment, const std::string& what);

}  // namespace ringlab::launch
