// The hand-written path on the GPU: a Transport whose memory is GPU memory and
// whose messages are ncclSend/ncclRecv, so every algorithm of primitives/
// (ring all_reduce, binomial broadcast, ...) runs unchanged on device buffers,
// next to NCCL's own collectives (NcclGroup).
//
// How messages map onto NCCL:
//  - NCCL has no tags: messages between two ranks are matched in the order
//    they are posted. The algorithms post them in the same order on both
//    sides; tags are kept only for error messages. A receive of the wrong size
//    cannot be detected by NCCL (documented in docs/gpu.md).
//    A receive names its sender: NCCL cannot receive from any source, so
//    irecv refuses kAnySource (Transport::check_source says so).
//  - isend/irecv only queue the operation. The first wait/test (or a
//    sendrecv, send or recv) launches everything queued so far as one
//    ncclGroupStart/End group on the rank's stream and records an event after
//    it. A group lets sends and receives progress together, as a ring needs
//    (posted one by one on one stream, two ranks that both send first would
//    wait for each other forever). A wait returns when its whole group is done.
//  - Waits poll the event and ncclCommGetAsyncError with the timeout; on
//    timeout the communicator is aborted and TimeoutError names both ranks.
//  - copy = cudaMemcpyAsync device-to-device, reduce/divide = the kernels of
//    reduce_kernels.cu, all on the same stream, so they are ordered with the
//    messages without any host synchronization (device_memory.hpp states
//    the stream rule).
//  - transport/nccl_rules/ follows these rules on CPU threads, so that an
//    algorithm can be checked against them without a GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "transport/nccl/communicator.hpp"
#include "transport/transport.hpp"

namespace ringlab::nccl {

class NcclTransport final : public Transport {
 public:
  explicit NcclTransport(std::shared_ptr<NcclCommunicator> communicator);
  ~NcclTransport() override;

  int rank() const override { return comm_->rank(); }
  int size() const override { return comm_->size(); }
  std::string_view name() const override { return "nccl"; }
  NcclCommunicator& communicator() { return *comm_; }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override;
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override;
  // Both in one NCCL group, then waits for it.
  void sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                MutBytes recv_data) override;

  MemoryKind memory() const override { return MemoryKind::Device; }
  // cudaMallocAsync on the rank's stream, cudaFreeAsync there with the Buffer.
  Buffer allocate(std::size_t bytes) override;
  void copy(MutBytes dst, ConstBytes src) override;
  void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) override;
  void divide(DType dtype, MutBytes data, int world_size) override;

  // Waits (with timeout()) until everything this rank enqueued has finished:
  // call before reading results on the host.
  void synchronize();

  struct Operation;  // one queued or launched send/recv
  struct GroupDone;  // the event after one launched group
  class NcclRequest;

 private:
  std::unique_ptr<Request> enqueue(bool is_send, int peer, Tag tag, std::byte* data,
                                   std::size_t bytes);
  // Launches every queued operation as one group (no-op when none is queued).
  void launch_queued();
  // Drops op from the queue if it is still there (its request went away).
  void withdraw(const std::shared_ptr<Operation>& op);
  // op's group, launching the queue first if op is still in it.
  std::shared_ptr<GroupDone> launched(Operation& op);
  void wait(Operation& op, Duration timeout);
  bool test(Operation& op);

  std::shared_ptr<NcclCommunicator> comm_;
  std::vector<std::shared_ptr<Operation>> queued_;  // guarded by comm_->issue_mutex()
};

}  // namespace ringlab::nccl
