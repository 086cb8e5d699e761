// One process joining a job of processes on the nccl backend (built with it):
// what init_process_group("nccl") and `--backend nccl` do in a process that a
// launcher (ringlab run, torchrun) started as a rank, or that the backend
// forked, for a program that wants the communicator itself (NcclGroup,
// NcclTransport) rather than a ProcessGroup.
//
//   ringlab run --nproc-per-node 2 -- ./my_program        # one GPU is enough
//   auto rank = ringlab::backends::join_nccl_job(ringlab::tcp::from_environment());
//   ringlab::nccl::NcclGroup group(rank.communicator);
//
// The ranks meet as the tcp backend's do (tcp::connect: the store, the job id,
// the job token), publish their NCCL hosts in that store and are placed
// (nccl::place_through_store: ranks on a host with fewer GPUs than ranks share
// them round-robin, each an NCCL host of its own), then pass the ncclUniqueId
// through it under a key with the job id.
#pragma once

#include <memory>
#include <string>

#include "transport/nccl/communicator.hpp"
#include "transport/nccl/store_rendezvous.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::backends {

struct NcclRank {
  // Kept alive with the communicator: rank 0 hosts the store in it.
  std::shared_ptr<tcp::TcpTransport> met;
  std::shared_ptr<nccl::NcclCommunicator> communicator;
  nccl::GpuPlacement placement;
  // nccl::sharing_note(): "" unless this rank shares a GPU; the host's lowest
  // rank (placement.first_on_host) is the one to print it.
  std::string note;
};

// Throws std::invalid_argument where CUDA shows no GPU (before meeting the
// others), and whatever the meeting or NCCL throws.
NcclRank join_nccl_job(const tcp::WorldSpec& world);

}  // namespace ringlab::backends
