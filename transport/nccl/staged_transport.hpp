// The transport behind `--backend nccl` for lessons and `ringlab bench`.
//
// ProcessGroup works on host Tensors: it hands their host storage to the
// algorithms and to the transport. So this transport keeps ProcessGroup's
// memory on the host (memory() == Host: scratch buffers, copies and reductions
// are the host ones, exactly as with inproc) and carries every message through
// the GPU: a send copies the bytes to a GPU staging buffer and ncclSends them;
// a receive ncclRecvs into a GPU staging buffer and copies the bytes back to
// the host buffer when it is waited on. The host copies run on the
// communicator's copy stream and the staging memory is stream-ordered
// (device_memory.hpp's rule), so neither a copy nor a free ever waits behind
// a group that waits for a peer. What runs is therefore ringlab's
// hand-written algorithm, with each message on NCCL's wire; NCCL's own
// collectives are NcclGroup, and the hand-written algorithms on GPU memory are
// NcclTransport. docs/gpu.md explains the choice.
#pragma once

#include <memory>

#include "transport/nccl/nccl_transport.hpp"

namespace ringlab::nccl {

class HostStagedNcclTransport final : public Transport {
 public:
  explicit HostStagedNcclTransport(std::shared_ptr<NcclCommunicator> communicator);

  int rank() const override { return device_.rank(); }
  int size() const override { return device_.size(); }
  std::string_view name() const override { return "nccl"; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override;
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override;
  // sendrecv: the base class's (both posted through isend/irecv above, then
  // waited on together).
  // memory(), allocate(), copy(), reduce(), divide(): the host defaults.

 private:
  std::shared_ptr<NcclCommunicator> comm_;
  NcclTransport device_;
};

}  // namespace ringlab::nccl
