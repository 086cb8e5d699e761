// Ranks as threads of this process, one GPU each (rank r on GPU r): the NCCL
// counterpart of run_world (transport/inproc.hpp). The ncclUniqueId is made
// once and handed to every thread in memory; processes use the rendezvous
// store instead (store_rendezvous.hpp).
#pragma once

#include <functional>
#include <memory>

#include "transport/nccl/communicator.hpp"

namespace ringlab::nccl {

// Checks that `size` GPUs are visible (std::invalid_argument otherwise, before
// NCCL is called), then runs body(communicator) on `size` threads and joins
// them. If a rank throws, the others' communicators are aborted at their next
// poll (PeerError naming the failed rank) instead of waiting for their
// timeout, and the first failure is rethrown here.
void run_nccl_world(int size, const std::function<void(std::shared_ptr<NcclCommunicator>)>& body,
                    Duration timeout = kDefaultTimeout);

}  // namespace ringlab::nccl
