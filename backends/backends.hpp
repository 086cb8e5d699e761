// Backends: how a world of ranks comes to be, one place for all of them.
//
// A backend is one row of one table (backends.cpp): a name, a line of help, and
// the two ways a program meets it:
//  - run_world: run body(pg) on every rank of a world of `world` ranks, the way
//    torch.multiprocessing.spawn does (inproc: threads of this process; tcp:
//    processes it starts itself, or the job it already belongs to; nccl:
//    threads, one GPU each). Lessons and `ringlab bench` run this way.
//  - init_process_group: this process is one rank of a job somebody else
//    started (`ringlab run`, torchrun, srun, mpirun), as
//    dist.init_process_group(backend) in a training script.
//
//   auto pg = ringlab::init_process_group("tcp");   // dist.init_process_group("gloo")
//   pg->all_reduce(tensor);
//
// A program that starts its own tcp ranks forks them at the call to run_ranks
// (rank_processes.hpp says how, step by step): each rank runs the body and
// ends there, and the program goes on after the call once every rank has
// ended. Nothing happens before main and nothing ends the program: a failed
// rank is an exception out of run_ranks that names it.
//
// The table is built in (no static registration), so a program that links
// ringlab::ringlab gets every backend this build has.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/process_group.hpp"

namespace ringlab {

// dist.init_process_group(backend): this process joins the job it was started
// in, reading RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (or Slurm's, Open
// MPI's or Horovod's variables; transport/tcp/tcp.hpp lists them). RINGLAB_TIMEOUT_MS, when
// set, overrides options.timeout; otherwise options.timeout also limits the
// rendezvous. "tcp" and "nccl" (where built) can; "inproc" cannot (its ranks
// are threads: use run_world). Throws std::invalid_argument naming the
// backends otherwise.
std::unique_ptr<ProcessGroup> init_process_group(std::string_view backend = "tcp",
                                                 ProcessGroupOptions options = {});

namespace backends {

using RankBody = std::function<void(ProcessGroup&)>;
// A body that hands something back to the caller (run_ranks_collecting).
using AnswerBody = std::function<std::string(ProcessGroup&)>;

struct TraceSession;  // traced_launch.hpp

struct Backend {
  std::string_view name;
  std::string_view help;  // one line: where the ranks run
  // Runs body on every rank of a world of `world` ranks; rethrows the first
  // failure (naming the rank).
  void (*run_world)(int world, const RankBody& body, const ProcessGroupOptions& group);
  // nullptr where a process cannot join a job on this backend.
  std::unique_ptr<ProcessGroup> (*init_process_group)(ProcessGroupOptions options);
  // Why this machine cannot run `world` ranks of this backend now ("" when it
  // can), found without starting a rank and without throwing: nccl needs a GPU
  // per rank. nullptr: any world.
  std::string (*cannot_run)(int world) = nullptr;
  // For a backend whose ranks may be processes this program starts (tcp):
  // run_world with every rank's answer returned (answers[r] from rank r) and,
  // given a TraceSession, the world traced into it. nullptr: the ranks are
  // threads of this process, and are not traced.
  std::vector<std::string> (*run_process_world)(int world, const AnswerBody& body,
                                                const ProcessGroupOptions& group,
                                                TraceSession* trace) = nullptr;
};

// Every backend this build has, the default (tcp) first.
std::span<const Backend> all_backends();
// Throws std::invalid_argument listing the backends when name is unknown.
const Backend& find_backend(std::string_view name);

std::vector<std::string> backend_names();
std::string backends_help();    // "inproc (ranks as threads), tcp (...)"
std::string default_backend();  // "tcp"

// Why this machine cannot run `world` ranks of `backend` now ("" when it can,
// or when the backend is not in this build: find_backend says that).
std::string cannot_run(std::string_view backend, int world);

// The world of the job that started this process as one of its ranks
// (WORLD_SIZE with RANK; Slurm's, Open MPI's and Horovod's too), or 0 when no
// launcher did (rank_world.cpp decides, as for every backend). Lessons, the
// tour and the benchmark run on this many ranks unless told -n (and -n that
// disagrees fails, naming both). Throws std::invalid_argument naming a
// variable that is set but wrong.
int launched_world_size();

// find_backend(backend).run_world(world, body, group), the world traced into
// `trace` when one is given (a backend that cannot trace throws
// std::invalid_argument saying so).
void run_ranks(std::string_view backend, int world, const RankBody& body,
               const ProcessGroupOptions& group, TraceSession* trace = nullptr);

// run_ranks for a body that returns something: answers[r] is what rank r's
// body returned, whether the ranks were threads of this process or processes
// it started. In a process that is one rank of a launched job, only its own
// rank's answer is there.
std::vector<std::string> run_ranks_collecting(std::string_view backend, int world,
                                              const AnswerBody& body,
                                              const ProcessGroupOptions& group);

}  // namespace backends
}  // namespace ringlab
