// Ranks as processes: the ncclUniqueId travels through the rendezvous store
// (store/store.hpp), as in torch.distributed's NCCL backend: rank 0 makes the
// id and sets it under a key; every other rank gets it (waiting, with the
// timeout) and all join the NCCL world. The store comes from the caller:
// init_process_group("nccl") uses the one its TCP rendezvous met through
// (backends/nccl.cpp).
#pragma once

#include <memory>
#include <string>

#include "store/store.hpp"
#include "transport/nccl/communicator.hpp"

namespace ringlab::nccl {

// Rank 0: ncclGetUniqueId, then store.set(key, id). Others: store.get(key).
ncclUniqueId exchange_unique_id(store::Store& store, int rank, const std::string& key,
                                Duration timeout);

// One rank of a world of processes, one GPU each (LOCAL_RANK picks the GPU).
struct ProcessRank {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  Duration timeout = kDefaultTimeout;
};

// Throws std::invalid_argument if GPU me.local_rank does not exist (one rank
// per GPU), saying how many this machine shows. Call it before meeting the
// other ranks, so that a rank without its GPU says so at once.
void require_gpu(const ProcessRank& me);

// The id through `store` under `key` (a key that names the job, so a stale id
// from an earlier job is never read), then a communicator on GPU
// me.local_rank.
std::shared_ptr<NcclCommunicator> join_through_store(store::Store& store, const std::string& key,
                                                     const ProcessRank& me);

}  // namespace ringlab::nccl
