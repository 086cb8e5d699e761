// How a process's ranks come to be: the one place that reads the launchers'
// variables and decides, for a world of ranks a program asks for, which of
// three ways it runs. Private to the tree (the tcp and nccl backends,
// `ringlab bench --native`, the commands, the exercise checker, the Python
// backend).
//
// The launchers: torchrun and `ringlab run` (RANK, WORLD_SIZE, LOCAL_RANK),
// srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), mpirun
// (OMPI_COMM_WORLD_*), horovodrun (HOROVOD_RANK, HOROVOD_SIZE,
// HOROVOD_LOCAL_RANK); tcp::from_environment() parses them, and nothing else
// in the library looks at them. A process is a launched rank when one of
// them gave it a world size and a rank (is_launched_rank); then every world
// it is asked for must be that size (check_world).
//
// The three ways (run_process_world; the first that fits):
//  1. Launched: this process is one rank of a job a launcher started. It
//     meets the other ranks once, with the first world, and keeps that
//     connection for every later world (`ringlab tour` runs several) in the
//     process's one launched seat (release_launched_seat below says how long
//     it lives), as torch.distributed keeps its default group:
//     meeting again at the same MASTER_PORT, a fast rank could reach the
//     store of the previous meeting just as rank 0 closes it. It runs its
//     own rank only.
//  2. Threads: the backend runs the ranks as threads of this process (nccl
//     where there is a GPU per rank, or none, which it reports).
//  3. Forked: the ranks are forks of this process, started at the call and
//     waited for (rank_processes.hpp), like torch.multiprocessing.spawn.
// A backend supplies only how one rank connects and how a world runs on a
// connected rank (ProcessWorld); the tcp and nccl backends and
// `bench --native` do.
//
// The timeout rule, the same everywhere (rank_spec): RINGLAB_TIMEOUT_MS,
// when set, wins over a group's timeout (ProcessGroupOptions::timeout,
// --timeout-ms, torch's timeout) and becomes it; otherwise the group's
// timeout also limits the meeting.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/rank_processes.hpp"
#include "backends/traced_launch.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::backends {

using EnvironmentLookup = tcp::EnvironmentLookup;

// This process's environment, as a lookup.
EnvironmentLookup process_environment();

// ---- who this process is ----------------------------------------------------

// The launched-rank test: a launcher gave this process a world size and a
// rank (any launcher's names, tcp::names_a_rank). A rank the tcp backend
// forked finds torchrun's names in its environment too, so it is one.
bool is_launched_rank(const EnvironmentLookup& lookup = process_environment());

// Its place (rank, world size, local rank) where is_launched_rank, else
// nothing. Throws std::invalid_argument naming a variable that is set but
// wrong ("RANK=4 but WORLD_SIZE=4: RANK must be in 0..3").
std::optional<tcp::RankPlace> launched_place(
    const EnvironmentLookup& lookup = process_environment());

// The world-size check: a rank of a world of `world_size` asked to run
// `asked` ranks throws std::invalid_argument saying both and what to pass.
void check_world(int rank, int world_size, int asked);

// Who a rank is and where it meets the others, under the timeout rule.
struct RankSpec {
  tcp::WorldSpec world;  // world.timeout: the meeting's limit
  // RINGLAB_TIMEOUT_MS was set: it is world.timeout and every group's.
  bool timeout_from_environment = false;
  // The timeout of a group asked to run with `asked`.
  Duration group_timeout(Duration asked) const {
    return timeout_from_environment ? world.timeout : asked;
  }
};

// tcp::from_environment(lookup) under the timeout rule, `group_timeout`
// being the group's. Throws std::invalid_argument naming a missing or bad
// variable.
RankSpec rank_spec(const EnvironmentLookup& lookup, Duration group_timeout);
// The same for a rank whose place and store come from elsewhere
// (torch.distributed's): only the settings are read (tcp::read_settings).
RankSpec rank_spec(int rank, int world_size, const EnvironmentLookup& lookup,
                   Duration group_timeout);

// ---- the three ways ---------------------------------------------------------

// One rank's connection to the others, made by a backend (ProcessWorld::
// connect): what every world on that rank runs on.
class RankConnection {
 public:
  virtual ~RankConnection() = default;
};

enum class RankMode { Launched, Threads, Forked };

// The decision (see the top): Launched where `lookup` names a rank,
// else Threads where the backend wants them (wants_threads, asked only
// then), else Forked.
RankMode rank_mode(const EnvironmentLookup& lookup, const std::function<bool()>& wants_threads);

// What a backend supplies to run a world of `world` ranks.
struct ProcessWorld {
  // Who runs it ("tcp backend", "bench --native"): errors start with it, and
  // a launched process keeps one connection, made for one of them.
  std::string name;
  int world = 0;
  // The group's timeout, before the rule.
  Duration timeout = kDefaultTimeout;
  // Connects one rank: `me` is who it is, `lookup` its variables (a launched
  // process's environment, or a forked rank's RankStart).
  std::function<std::unique_ptr<RankConnection>(const RankSpec& me,
                                                const EnvironmentLookup& lookup)>
      connect;
  // Runs this world on a connected rank; its answer.
  std::function<std::string(RankConnection& connection, const RankSpec& me)> run;
  // Whether the ranks run as threads of this process (nullptr: never), and
  // how.
  std::function<bool()> wants_threads;
  std::function<void()> run_threads;
  // Forked ranks: the launcher's name and the answers (rank_processes.hpp);
  // traced into `trace` when one is given (traced_launch.hpp).
  RankProcessOptions forks;
  TraceSession* trace = nullptr;
  // Says why this process cannot fork the ranks (nccl: CUDA has started
  // here), by throwing; nullptr: it can.
  std::function<void()> before_fork;
  // Added to the error of a world of forked ranks that failed.
  std::string failure_hint;
};

// Runs the world the way rank_mode says. Returns answers[r], rank r's
// answer, for the ranks this process has: its own where it is a launched
// rank; every rank's where it forked them (with forks.answers); none where
// they were threads. Throws what a rank threw (launched), or a
// std::runtime_error naming the rank that failed first (forked).
std::vector<std::string> run_process_world(const ProcessWorld& world);

// The connection a launched process keeps for all its worlds (see the top):
// made by its first world, released at exit, by an atexit handler
// registered once the connection is made, so that it runs before the
// teardown of what the connection started (CUDA's, whose own handler was
// registered during the connection).
void release_launched_seat();

}  // namespace ringlab::backends
