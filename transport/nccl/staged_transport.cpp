#include "transport/nccl/staged_transport.hpp"

#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/device_memory.hpp"

namespace ringlab::nccl {

namespace {

// A send: the staging buffer must live until the NCCL send is done.
class StagedSend final : public Request {
 public:
  StagedSend(DeviceBuffer staging, std::unique_ptr<Request> inner)
      : staging_(std::move(staging)), inner_(std::move(inner)) {}
  void wait(Duration timeout) override { inner_->wait(timeout); }
  bool test() override { return inner_->test(); }

 private:
  DeviceBuffer staging_;
  std::unique_ptr<Request> inner_;
};

// A receive: once NCCL has delivered into the staging buffer, copy it to the
// host buffer (once), waiting with the same timeout.
class StagedRecv final : public Request {
 public:
  StagedRecv(NcclCommunicator& comm, DeviceBuffer staging, MutBytes host,
             std::unique_ptr<Request> inner)
      : comm_(comm), staging_(std::move(staging)), host_(host), inner_(std::move(inner)) {}

  void wait(Duration timeout) override {
    if (copied_) return;
    inner_->wait(timeout);
    if (!host_.empty()) {
      DeviceGuard on_device(comm_.device(), comm_.rank());
      cudaEvent_t copied = nullptr;
      check_cuda(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming), comm_.rank(),
                 "cudaEventCreate");
      std::unique_ptr<CUevent_st, decltype(&cudaEventDestroy)> owner(copied, cudaEventDestroy);
      {
        std::lock_guard lock(comm_.issue_mutex());
        check_cuda(cudaMemcpyAsync(host_.data(), staging_.data(), host_.size(),
                                   cudaMemcpyDeviceToHost, comm_.stream()),
                   comm_.rank(), "copying a received message from the GPU to the host");
        check_cuda(cudaEventRecord(copied, comm_.stream()), comm_.rank(), "cudaEventRecord");
      }
      comm_.wait_event(copied, "copying a received message to the host", timeout);
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
  DeviceBuffer staging_;
  MutBytes host_;
  std::unique_ptr<Request> inner_;
  bool copied_ = false;
};

}  // namespace

HostStagedNcclTransport::HostStagedNcclTransport(std::shared_ptr<NcclCommunicator> communicator)
    : device_(std::move(communicator)) {
  set_timeout(device_.timeout());
}

std::unique_ptr<Request> HostStagedNcclTransport::isend(int dst, Tag tag, ConstBytes data) {
  check_peer(dst, "isend: dst");
  NcclCommunicator& comm = device_.communicator();
  DeviceGuard on_device(comm.device(), rank());
  DeviceBuffer staging(data.size(), comm.device());
  if (!data.empty()) {
    // From pageable host memory this returns once the bytes are staged, so the
    // caller may reuse its buffer at once; on the stream it precedes the send.
    std::lock_guard lock(comm.issue_mutex());
    check_cuda(cudaMemcpyAsync(staging.data(), data.data(), data.size(), cudaMemcpyHostToDevice,
                               comm.stream()),
               rank(), "copying a message to the GPU");
  }
  auto inner = device_.isend(dst, tag, staging.span());
  return std::make_unique<StagedSend>(std::move(staging), std::move(inner));
}

std::unique_ptr<Request> HostStagedNcclTransport::irecv(int src, Tag tag, MutBytes data) {
  check_peer(src, "irecv: src");
  NcclCommunicator& comm = device_.communicator();
  DeviceBuffer staging(data.size(), comm.device());
  auto inner = device_.irecv(src, tag, staging.span());
  return std::make_unique<StagedRecv>(comm, std::move(staging), data, std::move(inner));
}

}  // namespace ringlab::nccl
