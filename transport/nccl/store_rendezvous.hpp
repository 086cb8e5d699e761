// Ranks as processes: they meet through the rendezvous store (store/store.hpp)
// as in torch.distributed's NCCL backend. Every rank publishes its NCCL host
// there, so that ranks on a host with fewer GPUs than ranks can share them;
// rank 0 makes the ncclUniqueId and sets it under a key; every other rank
// gets it (waiting, with the timeout) and all join the NCCL world. The store
// comes from the caller: the nccl backend uses the one its TCP rendezvous met
// through (backends/nccl_join.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/store.hpp"
#include "transport/nccl/communicator.hpp"

namespace ringlab::nccl {

// Rank 0: ncclGetUniqueId, then store.set(key, id). Others: store.get(key).
ncclUniqueId exchange_unique_id(store::Store& store, int rank, const std::string& key,
                                Duration timeout);

// One rank of a world of processes.
struct ProcessRank {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  Duration timeout = kDefaultTimeout;
};

// Throws std::invalid_argument where CUDA shows no GPU, saying why. Call it
// before meeting the other ranks, so that a rank without a GPU says so at once.
void require_gpu(const ProcessRank& me);

// Where a rank runs: its GPU, and whether it shares it.
struct GpuPlacement {
  int device = 0;             // the k-th rank of a host gets GPU k % (the host's GPUs)
  int ranks_on_host = 1;      // this rank's host's ranks
  bool first_on_host = true;  // the lowest rank of its host (it prints the note)
  // Set where the host has more ranks than GPUs: this rank's NCCL host id
  // ("HOST/rankR"), so that NCCL lets two ranks share a GPU (it refuses two
  // ranks on one device only within one host).
  std::string host_id;
  bool loopback = false;  // every rank of the world is on this host
};

// Places `rank` given every rank's NCCL host (hosts[r]: NCCL_HOSTID if set,
// else the host name) and the GPUs this rank's host shows. Pure: the tests
// call it.
GpuPlacement place_ranks(const std::vector<std::string>& hosts, int rank, int gpus);
// The line a world of shared GPUs prints once ("" when nothing is shared).
std::string sharing_note(const GpuPlacement& placement, int gpus);

// Publishes this rank's NCCL host under prefix + "host/RANK", reads every
// rank's, and places this rank (place_ranks). Where it shares a GPU, sets
// NCCL_HOSTID (and NCCL_SOCKET_IFNAME=lo, unless set, when the whole world is
// on this host) in this process's environment: NCCL reads them nowhere else,
// so this comes before this process's first NCCL call.
GpuPlacement place_through_store(store::Store& store, const std::string& prefix,
                                 const ProcessRank& me);

// The id through `store` under `key` (a key that names the job, so a stale id
// from an earlier job is never read), then a communicator on GPU `device`.
std::shared_ptr<NcclCommunicator> join_through_store(store::Store& store, const std::string& key,
                                                     const ProcessRank& me, int device);

}  // namespace ringlab::nccl
