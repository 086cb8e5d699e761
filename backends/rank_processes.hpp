// A world's ranks as processes of this program, started at the call, the way
// torch.multiprocessing.spawn starts them: the tcp backend's ranks when a
// program runs run_ranks("tcp", ...) outside a launcher, and any backend whose
// ranks are processes.
//
//   RankProcesses ranks = run_rank_processes(4, {"my program"}, [&](const RankStart& start) {
//     auto transport = tcp::connect(tcp::from_environment(start.lookup()));  // rank start.rank
//     ...                                                                    // its work
//     return std::string("what it hands back");  // ranks.answers[start.rank]
//   });
//
// How, step by step (a reader can follow it from the call):
//  1. The caller's process forks `world` children, one per rank, through the
//     launcher (launch::launch with LaunchOptions::rank_entry): each child is
//     supervised as `ringlab run` supervises its ranks: its lines passed on
//     whole, a failed rank stops the others and is named (blamed by cause,
//     not by who exited first), SIGTERM then SIGKILL, nothing left running.
//  2. Each child runs rank_main(start) from the point of the call, with a copy
//     of the caller's memory (the body, its captures) and nothing else: no
//     second main, no re-executed program. RankStart holds the variables the
//     launcher gave the rank (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, the
//     job token), handed over as an argument. Its environment also gets the
//     ones torchrun gives its workers (RANK, LOCAL_RANK, MASTER_PORT, ...),
//     for the program's own code that reads them (the articles' programs
//     do); ringlab's own (RINGLAB_JOB_TOKEN, RINGLAB_TRACE_DIR) it gets only
//     as arguments.
//  3. What rank_main returns comes back to the caller in memory: an anonymous
//     in-memory file per rank (memfd), written by the rank, read by the caller
//     once the rank has ended (nothing touches the disk; a large answer cannot
//     block the rank as a full pipe would).
//  4. The child ends where rank_main returns, in launcher/spawn.cpp's
//     spawn_forked (exit status 0; an exception: its message on stderr and
//     status 1), without running the caller's atexit handlers or static
//     destructors. The caller goes on after the call, as after mp.spawn.
//
// Forking's rules, kept here (launcher/spawn.hpp has the details): stdout and
// stderr are flushed before the fork, so nothing printed before the call is
// printed twice; a rank's stdout is fully buffered, as an executed program's
// on a pipe; signal handlers are reset to their defaults in the rank. Call it
// while the program runs one thread: a fork copies only the calling thread,
// and a lock another thread held stays locked in the rank. The launcher
// checks that where it forks, and refuses a program that runs more, saying
// how many (launcher/spawn.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/traced_launch.hpp"
#include "launcher/launcher.hpp"

namespace ringlab::backends {

// What a forked rank knows of its world.
class RankStart {
 public:
  explicit RankStart(const launch::RankVariables& variables);
  int rank = 0;
  int world_size = 0;
  // A variable of this rank: the launcher's first, then this process's
  // environment (where the user's RINGLAB_BIND_ADDR or RINGLAB_TIMEOUT_MS are):
  // what an executed rank would read. nullptr when neither has it.
  const char* get(const char* name) const;
  // get() as tcp::from_environment(lookup) takes it.
  std::function<const char*(const char*)> lookup() const;

 private:
  const launch::RankVariables& variables_;
};

using RankMain = std::function<std::string(const RankStart& start)>;

struct RankProcessOptions {
  // How the launcher's own messages start ("ringlab (tcp backend)").
  std::string name = "ringlab";
  // Traced (traced_launch.hpp): every rank gets the variables of a traced
  // launch, and their files are merged into trace->output once they end.
  std::optional<TracedLaunchOptions> trace;
  // False: the answers are not wanted (no in-memory file per rank is made, so
  // a large world holds one descriptor fewer per rank; answers stays empty).
  bool answers = true;
};

struct RankProcesses {
  // How every rank ended; exit_code != 0 when one failed, and message names
  // the rank blamed ("rank 2 exited with status 1; stopped the other 3 ranks").
  launch::LaunchResult launch;
  // answers[r]: what rank r's rank_main returned ("" for a rank that failed);
  // empty when options.answers is false.
  std::vector<std::string> answers;
  // For a traced run: what was merged, and one line saying where it went.
  TraceResult traced;
};

// Starts `world` ranks as forks of this process, each running rank_main, and
// returns once every one has ended (see the top of this file). Throws
// std::runtime_error when a rank cannot be started.
RankProcesses run_rank_processes(int world, const RankProcessOptions& options,
                                 const RankMain& rank_main);

}  // namespace ringlab::backends
