// The `nccl` backend: every ProcessGroup runs ringlab's hand-written
// algorithms on host tensors with each message carried by ncclSend/ncclRecv
// through GPU memory (transport/nccl/staged_transport.hpp says why). Three
// ways a world comes to be:
//  - `--backend nccl -n N` of `ringlab lesson`, `tour` and `bench` in a
//    process that is not a rank, with N GPUs or more: ranks as threads, one
//    GPU each;
//  - the same with fewer GPUs (one is enough): ranks as processes forked at
//    the call (rank_processes.hpp), which share the GPUs as launched ranks do;
//  - a process a launcher started as a rank (`ringlab run --nproc-per-node 2
//    -- ringlab lesson all_reduce --backend nccl -n 2`), and
//    init_process_group("nccl"): this process is one rank (join_nccl_job,
//    nccl_join.hpp); ranks on a host with fewer GPUs than ranks share them
//    round-robin, and the host's lowest rank prints one line saying so.
// The GPUs are counted without starting CUDA in this process (a child
// counts them), because CUDA does not survive the fork of the second way.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "backends/nccl_join.hpp"
#include "backends/rank_processes.hpp"
#include "backends/rows.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/nccl_world.hpp"
#include "transport/nccl/staged_transport.hpp"

namespace ringlab::backends {

NcclRank join_nccl_job(const tcp::WorldSpec& world) {
  const nccl::ProcessRank me{world.rank, world.world_size, world.local_rank, world.timeout};
  nccl::require_gpu(me);
  NcclRank joined;
  joined.met = tcp::connect(world);
  const std::string prefix = "ringlab/nccl/" + std::to_string(joined.met->job_id()) + "/";
  joined.placement = nccl::place_through_store(joined.met->store(), prefix, me);
  joined.note = nccl::sharing_note(joined.placement, nccl::visible_gpu_count());
  joined.communicator = nccl::join_through_store(joined.met->store(), prefix + "unique_id", me,
                                                 joined.placement.device);
  return joined;
}

namespace {

bool started_as_rank() { return std::getenv("RANK") && std::getenv("WORLD_SIZE"); }

// This process's rank of a job, with the staged transport its groups use.
struct JoinedRank {
  explicit JoinedRank(const tcp::WorldSpec& world)
      : rank(join_nccl_job(world)), transport(rank.communicator) {
    if (!rank.note.empty() && rank.placement.first_on_host)
      std::fprintf(stderr, "ringlab: %s\n", rank.note.c_str());
  }
  NcclRank rank;
  nccl::HostStagedNcclTransport transport;
};

// A launched process's one JoinedRank, kept for every world the program runs
// (a tour runs several). Destroyed by an atexit handler registered once CUDA
// has started, so that it runs before CUDA's own teardown (a static object's
// destructor would run after it, with NCCL's GPU context gone).
JoinedRank*& launched_rank() {
  static JoinedRank* me = nullptr;
  return me;
}

tcp::WorldSpec world_for(ProcessGroupOptions& options,
                         const tcp::EnvironmentLookup& lookup = nullptr) {
  tcp::WorldSpec world = lookup ? tcp::from_environment(lookup) : tcp::from_environment();
  const bool timeout_set = lookup ? lookup("RINGLAB_TIMEOUT_MS") != nullptr
                                  : std::getenv("RINGLAB_TIMEOUT_MS") != nullptr;
  if (timeout_set)
    options.timeout = world.timeout;
  else
    world.timeout = options.timeout;
  return world;
}

void check_world(const tcp::WorldSpec& world, int asked) {
  if (world.world_size == asked) return;
  throw std::invalid_argument(
      "this process is rank " + std::to_string(world.rank) + " of a world of " +
      std::to_string(world.world_size) + " (WORLD_SIZE), but it was asked to run " +
      std::to_string(asked) + " ranks: pass --world-size " + std::to_string(world.world_size) +
      ", or start " + std::to_string(asked) + " ranks (ringlab run --nproc-per-node " +
      std::to_string(asked) + " -- ...)");
}

void run_as_launched_rank(int world, const RankBody& body, const ProcessGroupOptions& group) {
  ProcessGroupOptions options = group;
  const tcp::WorldSpec spec = world_for(options);
  check_world(spec, world);
  JoinedRank*& me = launched_rank();
  if (!me) {
    me = new JoinedRank(spec);
    std::atexit([] {
      delete launched_rank();
      launched_rank() = nullptr;
    });
  }
  ProcessGroup pg(std::shared_ptr<Transport>(&me->transport, [](Transport*) {}), options);
  body(pg);
}

// More ranks than GPUs, and no launcher: fork them (rank_processes.hpp).
// Each meets the others through the launcher's store and shares the GPUs,
// as launched ranks do; its NCCL world ends with its rank_main.
void run_forked_ranks(int world, const RankBody& body, const ProcessGroupOptions& group) {
  if (nccl::cuda_started_here())
    throw std::invalid_argument(
        "--backend nccl: " + std::to_string(world) + " ranks on fewer GPUs run as processes "
        "forked from this one, but this process has used the GPU already (an earlier world ran "
        "its ranks as threads) and CUDA does not survive a fork: run this world in a program of "
        "its own");
  RankProcessOptions options;
  options.name = "ringlab (nccl backend)";
  options.answers = false;
  RankProcesses ranks = run_rank_processes(world, options, [&](const RankStart& start) {
    ProcessGroupOptions rank_options = group;
    JoinedRank me(world_for(rank_options, start.lookup()));
    ProcessGroup pg(std::shared_ptr<Transport>(&me.transport, [](Transport*) {}), rank_options);
    body(pg);
    return std::string();
  });
  const launch::LaunchResult& result = ranks.launch;
  if (result.exit_code != 0) {
    const bool said_why = result.first_failure && !result.first_failure->error.empty();
    throw std::runtime_error("nccl backend: " + result.message +
                             (said_why ? " (its error is above)" : " (it printed no error)"));
  }
}

}  // namespace

void run_nccl_ranks(int world, const RankBody& body, const ProcessGroupOptions& group) {
  if (started_as_rank()) return run_as_launched_rank(world, body, group);
  std::string why;
  const int gpus = nccl::gpu_count_without_starting_cuda(&why);
  if (gpus < world && gpus > 0) return run_forked_ranks(world, body, group);
  nccl::run_nccl_world(  // says why not where CUDA shows no GPU
      world,
      [&](std::shared_ptr<nccl::NcclCommunicator> communicator) {
        ProcessGroup pg(std::make_shared<nccl::HostStagedNcclTransport>(std::move(communicator)),
                        group);
        body(pg);
      },
      group.timeout);
}

std::string nccl_cannot_run(int world) {
  std::string why;
  const int gpus = nccl::gpu_count_without_starting_cuda(&why);
  if (gpus >= world) return "";
  if (gpus <= 0) return "needs a GPU; CUDA shows none here: " + why;
  // Fewer GPUs than ranks: launched ranks share them, and so do ranks this
  // process forks, unless it has started CUDA itself.
  if (started_as_rank() || !nccl::cuda_started_here()) return "";
  return "needs " + std::to_string(world) + " GPUs for ranks as threads, and this process has "
         "used the GPU already, so it cannot fork ranks that share " + std::to_string(gpus);
}

std::unique_ptr<ProcessGroup> init_nccl_process_group(ProcessGroupOptions options) {
  auto held = std::make_shared<JoinedRank>(world_for(options));
  return std::make_unique<ProcessGroup>(std::shared_ptr<Transport>(held, &held->transport),
                                        std::move(options));
}

}  // namespace ringlab::backends
