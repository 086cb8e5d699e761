// How many ranks this machine lets one launcher start, so that
// `ringlab run --nproc-per-node 100000` is refused at once with the reason,
// instead of forking until a limit bites and then taking minutes to reap
// what it started. Derived from this process's soft limits and what is in
// use now:
//   - descriptors (RLIMIT_NOFILE, ulimit -n): the supervisor holds each
//     rank's stdout and stderr pipes, and two log files more with a log
//     folder; a few are kept for the launcher itself;
//   - processes: each rank is one; the kernel's pid_max and threads-max
//     bound every user, and RLIMIT_NPROC (ulimit -u) the tasks of this user
//     (the kernel does not apply it to root).
// What the ranks open themselves (a TCP rank's connections) is theirs to
// fit into their own limits.
#pragma once

#include <string>

namespace ringlab::launch {

struct RankCapacity {
  int ranks = 0;       // at most this many ranks
  std::string limit;   // the limit that binds, with its numbers
  std::string raise;   // how to raise it
};

// The capacity of this machine for one launch (log_files: each rank's
// output also goes to files).
RankCapacity rank_capacity(bool log_files);

// Throws std::invalid_argument when nproc_per_node is more than
// rank_capacity allows, saying which limit and what to do.
void check_rank_capacity(int nproc_per_node, bool log_files);

}  // namespace ringlab::launch
