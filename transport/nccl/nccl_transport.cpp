#include "transport/nccl/nccl_transport.hpp"

#include <algorithm>
#include <mutex>

#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/device_memory.hpp"
#include "transport/nccl/reduce_kernels.hpp"

namespace ringlab::nccl {

// An event recorded after one launched group; shared by the group's operations.
struct NcclTransport::GroupDone {
  cudaEvent_t event = nullptr;
  ~GroupDone() {
    if (event) cudaEventDestroy(event);
  }
};

struct NcclTransport::Operation {
  bool is_send = false;
  int peer = 0;
  Tag tag = 0;
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  std::shared_ptr<GroupDone> done;  // null until launched
  bool finished = false;
};

class NcclTransport::NcclRequest final : public Request {
 public:
  NcclRequest(NcclTransport& transport, std::shared_ptr<Operation> op)
      : transport_(transport), op_(std::move(op)) {}
  // Still queued: it never reaches NCCL (its buffer may be gone by launch).
  ~NcclRequest() override { transport_.withdraw(op_); }
  void wait(Duration timeout) override { transport_.wait(*op_, timeout); }
  bool test() override { return transport_.test(*op_); }

 private:
  NcclTransport& transport_;
  std::shared_ptr<Operation> op_;
};

NcclTransport::NcclTransport(std::shared_ptr<NcclCommunicator> communicator)
    : comm_(std::move(communicator)) {
  if (!comm_) throw std::invalid_argument("NcclTransport needs a communicator");
  set_timeout(comm_->timeout());
}

NcclTransport::~NcclTransport() = default;

std::unique_ptr<Request> NcclTransport::isend(int dst, Tag tag, ConstBytes data) {
  check_peer(dst, "isend: dst");
  return enqueue(true, dst, tag, const_cast<std::byte*>(data.data()), data.size());
}

std::unique_ptr<Request> NcclTransport::irecv(int src, Tag tag, MutBytes data) {
  check_source(src, "irecv: src");
  return enqueue(false, src, tag, data.data(), data.size());
}

std::unique_ptr<Request> NcclTransport::enqueue(bool is_send, int peer, Tag tag, std::byte* data,
                                                std::size_t bytes) {
  auto op = std::make_shared<Operation>();
  op->is_send = is_send;
  op->peer = peer;
  op->tag = tag;
  op->data = data;
  op->bytes = bytes;
  {
    std::lock_guard lock(comm_->issue_mutex());
    comm_->check_usable();
    queued_.push_back(op);
  }
  return std::make_unique<NcclRequest>(*this, std::move(op));
}

void NcclTransport::withdraw(const std::shared_ptr<Operation>& op) {
  std::lock_guard lock(comm_->issue_mutex());
  if (op->done) return;  // launched
  queued_.erase(std::remove(queued_.begin(), queued_.end(), op), queued_.end());
}

void NcclTransport::launch_queued() {
  std::lock_guard lock(comm_->issue_mutex());
  if (queued_.empty()) return;
  comm_->check_usable();
  DeviceGuard on_device(comm_->device(), rank());
  auto done = std::make_shared<GroupDone>();
  check_cuda(cudaEventCreateWithFlags(&done->event, cudaEventDisableTiming), rank(),
             "cudaEventCreate");
  const ncclComm_t comm = comm_->get();
  const cudaStream_t stream = comm_->stream();
  // Bytes travel as ncclUint8: the transport moves byte ranges, like the others.
  check_nccl(ncclGroupStart(), rank(), "ncclGroupStart");
  for (const auto& op : queued_) {
    if (op->is_send)
      check_nccl(ncclSend(op->data, op->bytes, ncclUint8, op->peer, comm, stream), rank(),
                 "ncclSend to rank " + std::to_string(op->peer) + " (" + describe_tag(op->tag) + ")");
    else
      check_nccl(ncclRecv(op->data, op->bytes, ncclUint8, op->peer, comm, stream), rank(),
                 "ncclRecv from rank " + std::to_string(op->peer) + " (" + describe_tag(op->tag) +
                     ")");
  }
  check_nccl(ncclGroupEnd(), rank(), "ncclGroupEnd");
  comm_->wait_issued("launching " + std::to_string(queued_.size()) + " sends/receives");
  check_cuda(cudaEventRecord(done->event, stream), rank(), "cudaEventRecord");
  for (const auto& op : queued_) op->done = done;
  queued_.clear();
}

std::shared_ptr<NcclTransport::GroupDone> NcclTransport::launched(Operation& op) {
  std::lock_guard lock(comm_->issue_mutex());
  if (!op.done) launch_queued();
  return op.done;
}

void NcclTransport::wait(Operation& op, Duration timeout) {
  if (op.finished) return;
  const auto done = launched(op);
  try {
    comm_->wait_event(done->event,
                      op.is_send ? "send to rank " + std::to_string(op.peer)
                                 : "receive from rank " + std::to_string(op.peer),
                      timeout);
  } catch (const TimeoutError&) {
    // The standard message: both ranks, the direction and the tag.
    throw TimeoutError(timeout_message(rank(), op.is_send ? "send to" : "receive from", op.peer,
                                       op.tag, timeout) +
                       " (the NCCL communicator was aborted)");
  }
  op.finished = true;
}

bool NcclTransport::test(Operation& op) {
  if (op.finished) return true;
  const auto done = launched(op);
  DeviceGuard on_device(comm_->device(), rank());
  const cudaError_t status = cudaEventQuery(done->event);
  if (status == cudaErrorNotReady) {
    comm_->check_progress("test");
    return false;
  }
  check_cuda(status, rank(), "cudaEventQuery");
  op.finished = true;
  return true;
}

void NcclTransport::sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                             MutBytes recv_data) {
  auto recv_request = irecv(src, recv_tag, recv_data);
  auto send_request = isend(dst, send_tag, send_data);
  launch_queued();  // one group: neither direction waits for the other
  send_request->wait(timeout());
  recv_request->wait(timeout());
}

Buffer NcclTransport::allocate(std::size_t bytes) {
  // Stream-ordered: freeing it never blocks the host behind a group in flight.
  return DeviceBuffer::make_stream_buffer(bytes, comm_->device(), comm_->stream(), comm_);
}

void NcclTransport::copy(MutBytes dst, ConstBytes src) {
  if (src.empty()) return;
  DeviceGuard on_device(comm_->device(), rank());
  check_cuda(cudaMemcpyAsync(dst.data(), src.data(), src.size(), cudaMemcpyDeviceToDevice,
                             comm_->stream()),
             rank(), "cudaMemcpyAsync device to device (" + std::to_string(src.size()) + " bytes)");
}

void NcclTransport::reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) {
  DeviceGuard on_device(comm_->device(), rank());
  reduce_on_device(dtype, op, acc.data(), in.data(), acc.size() / element_size(dtype),
                   comm_->stream());
}

void NcclTransport::divide(DType dtype, MutBytes data, int world_size) {
  DeviceGuard on_device(comm_->device(), rank());
  divide_on_device(dtype, data.data(), data.size() / element_size(dtype), world_size,
                   comm_->stream());
}

void NcclTransport::synchronize() {
  launch_queued();
  comm_->wait_stream("synchronizing this rank's GPU work");
}

}  // namespace ringlab::nccl
