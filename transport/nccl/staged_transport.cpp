#include "transport/nccl/staged_transport.hpp"

#include <mutex>

#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/device_memory.hpp"

namespace ringlab::nccl {

namespace {

using EventOwner = std::unique_ptr<CUevent_st, decltype(&cudaEventDestroy)>;

EventOwner make_event(int rank) {
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), rank, "cudaEventCreate");
  return EventOwner(event, cudaEventDestroy);
}

// `later` waits (on the GPU, not the host) for everything queued on
// `earlier` so far.
void order_after(cudaStream_t later, cudaStream_t earlier, int rank, const char* why) {
  EventOwner event = make_event(rank);
  check_cuda(cudaEventRecord(event.get(), earlier), rank, std::string("cudaEventRecord: ") + why);
  check_cuda(cudaStreamWaitEvent(later, event.get(), 0), rank,
             std::string("cudaStreamWaitEvent: ") + why);
  // Destroying a recorded event the stream still waits on is allowed: CUDA
  // releases it once the wait is done.
}

// Staging memory from the copy stream's order: the host copies use it there,
// and the communicator's stream is made to wait before NCCL touches it.
Buffer staging_buffer(const std::shared_ptr<NcclCommunicator>& comm, std::size_t bytes) {
  return DeviceBuffer::make_stream_buffer(bytes, comm->device(), comm->copy_stream(), comm);
}

// A send: the staging buffer must live until the NCCL send is done.
class StagedSend final : public Request {
 public:
  StagedSend(NcclCommunicator& comm, Buffer staging, std::unique_ptr<Request> inner)
      : comm_(comm), staging_(std::move(staging)), inner_(std::move(inner)) {}
  ~StagedSend() override {
    if (finished_ || !staging_.storage) return;
    // Dropped unfinished (an error unwinds): the staging memory goes back to
    // the copy stream's pool only after what the communicator's stream has
    // queued so far, the send included if it was launched.
    try {
      DeviceGuard on_device(comm_.device(), comm_.rank());
      std::lock_guard lock(comm_.issue_mutex());
      order_after(comm_.copy_stream(), comm_.stream(), comm_.rank(), "freeing a staging buffer");
    } catch (const std::exception&) {
      // Nothing to report from a destructor; the communicator is failing anyway.
    }
  }
  void wait(Duration timeout) override {
    inner_->wait(timeout);
    finished_ = true;
  }
  bool test() override { return finished_ = finished_ || inner_->test(); }

 private:
  NcclCommunicator& comm_;
  Buffer staging_;
  std::unique_ptr<Request> inner_;
  bool finished_ = false;
};

// A receive: once NCCL has delivered into the staging buffer, copy it to the
// host buffer (once), on the copy stream, which holds nothing that waits for
// a peer.
class StagedRecv final : public Request {
 public:
  StagedRecv(NcclCommunicator& comm, Buffer staging, MutBytes host, std::unique_ptr<Request> inner)
      : comm_(comm), staging_(std::move(staging)), host_(host), inner_(std::move(inner)) {}
  ~StagedRecv() override {
    if (copied_ || !staging_.storage) return;
    try {
      DeviceGuard on_device(comm_.device(), comm_.rank());
      std::lock_guard lock(comm_.issue_mutex());
      order_after(comm_.copy_stream(), comm_.stream(), comm_.rank(), "freeing a staging buffer");
    } catch (const std::exception&) {
    }
  }

  void wait(Duration timeout) override {
    if (copied_) return;
    inner_->wait(timeout);  // the group's event: NCCL has written the staging buffer
    if (!host_.empty()) {
      DeviceGuard on_device(comm_.device(), comm_.rank());
      EventOwner copied = make_event(comm_.rank());
      check_cuda(cudaMemcpyAsync(host_.data(), staging_.storage.get(), host_.size(),
                                 cudaMemcpyDeviceToHost, comm_.copy_stream()),
                 comm_.rank(), "copying a received message from the GPU to the host");
      check_cuda(cudaEventRecord(copied.get(), comm_.copy_stream()), comm_.rank(),
                 "cudaEventRecord");
      comm_.wait_event(copied.get(), "copying a received message to the host", timeout);
    }
    copied_ = true;
  }
  bool test() override {
    if (copied_) return true;
    if (!inner_->test()) return false;
    wait(comm_.timeout());  // delivered: the copy back is quick
    return true;
  }

 private:
  NcclCommunicator& comm_;
  Buffer staging_;
  MutBytes host_;
  std::unique_ptr<Request> inner_;
  bool copied_ = false;
};

}  // namespace

HostStagedNcclTransport::HostStagedNcclTransport(std::shared_ptr<NcclCommunicator> communicator)
    : comm_(communicator), device_(std::move(communicator)) {
  set_timeout(device_.timeout());
}

std::unique_ptr<Request> HostStagedNcclTransport::isend(int dst, Tag tag, ConstBytes data) {
  check_peer(dst, "isend: dst");
  NcclCommunicator& comm = *comm_;
  DeviceGuard on_device(comm.device(), rank());
  Buffer staging = staging_buffer(comm_, data.size());
  if (!data.empty()) {
    // From pageable host memory this returns once the bytes are staged, so
    // the caller may reuse its buffer at once. On the copy stream it never
    // waits behind a group of the communicator's stream.
    check_cuda(cudaMemcpyAsync(staging.storage.get(), data.data(), data.size(),
                               cudaMemcpyHostToDevice, comm.copy_stream()),
               rank(), "copying a message to the GPU");
  }
  {
    // The send (queued after this) runs once the copy has landed.
    std::lock_guard lock(comm.issue_mutex());
    order_after(comm.stream(), comm.copy_stream(), rank(), "ordering a send after its copy");
  }
  auto inner = device_.isend(dst, tag, staging.span());
  return std::make_unique<StagedSend>(comm, std::move(staging), std::move(inner));
}

std::unique_ptr<Request> HostStagedNcclTransport::irecv(int src, Tag tag, MutBytes data) {
  check_source(src, "irecv: src");
  NcclCommunicator& comm = *comm_;
  DeviceGuard on_device(comm.device(), rank());
  Buffer staging = staging_buffer(comm_, data.size());
  {
    // The staging memory is the copy stream's until the communicator's
    // stream has caught up with its allocation.
    std::lock_guard lock(comm.issue_mutex());
    order_after(comm.stream(), comm.copy_stream(), rank(), "ordering a receive after its buffer");
  }
  auto inner = device_.irecv(src, tag, staging.span());
  return std::make_unique<StagedRecv>(comm, std::move(staging), data, std::move(inner));
}

}  // namespace ringlab::nccl
