// Starting one rank: its program found on PATH, its environment, and the
// fork/exec that gives it pipes for stdout and stderr, its own process group,
// and death when the launcher dies. Or, for a program that starts its own
// ranks, a fork that runs a function of this program instead of a program.
#pragma once

#include <sys/types.h>

#include <functional>
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

// Forks a rank that runs entry() in this program instead of executing one,
// set up as spawn() sets up an executed rank (its own process group, SIGKILL
// when the launcher dies, stdout and stderr on pipes, no signal blocked).
//
// Before the fork this process flushes stdout and stderr (std::cout, and the
// stdio streams under it), so that nothing it printed before is printed again
// by the child. In the child:
//  - every signal this program handles gets its default action back, as an
//    executed program's would; the ones it ignores stay ignored;
//  - stdout is fully buffered, as an executed program's stdout on a pipe is:
//    the rank's lines reach the launcher when it flushes them or ends;
//  - this process's descriptors stay open (only 1 and 2 become the pipes);
//    its memory is a copy, and so are the locks its other threads held at the
//    fork, held forever: start ranks while the program runs one thread (a
//    program that runs more is refused before the fork, saying how many);
//  - it ends here, right after entry() returns: stdout and stderr are flushed
//    and the child leaves with _exit(status), entry()'s return value (an
//    exception out of entry() is printed, "PROGRAM: error: WHAT", status 1).
//    _exit runs none of what belongs to the parent: no atexit handler, no
//    static destructor, no unwinding into the frames of the call that forked.
// Throws std::runtime_error naming `what` when the program runs more than one
// thread, or the pipes or the fork fail.
SpawnedChild spawn_forked(const std::function<int()>& entry, const std::string& what);

}  // namespace ringlab::launch
