// GPU memory for the NCCL backend. ringlab's Tensor is host memory and stays
// that way; a DeviceTensor is its GPU counterpart (same dtype and shape) with
// explicit upload/download, so every host<->device copy is visible in the code.
//
// The stream rule, for every CUDA call of transport/nccl/ and its tests:
//  - A rank's NCCL calls, reduction kernels and device-to-device copies run
//    on its communicator's stream (NcclCommunicator::stream()). That stream
//    is created cudaStreamNonBlocking: it does not wait for the legacy
//    default stream (cudaMemset, cudaMemcpy, kernels launched without a
//    stream) and the legacy stream does not wait for it; cudaStreamPerThread
//    does not order it either. Nothing orders work on two streams unless an
//    event or the host does.
//  - So any other operation on memory the communicator's stream will use is
//    finished before that stream gets to it: DeviceBuffer's and
//    DeviceTensor's constructors (the zero-fill), upload() and download()
//    run on cudaStreamPerThread and wait for it before they return; the
//    staged transport's host copies run on the communicator's copy stream,
//    and the communicator's stream waits for them by event.
//  - The host reads GPU memory only after waiting for the stream that wrote
//    it: NcclGroup's calls return synchronized; after NcclTransport work,
//    call its synchronize() (or wait for the request) before download().
//  - Nothing that can block the host waits behind the communicator's stream
//    while that stream may hold a group waiting for a peer (it would wait
//    without a timeout): no cudaFree, cudaMemcpy or pageable copy is queued
//    there. Scratch and staging memory is stream-ordered (make_stream_buffer:
//    cudaMallocAsync/cudaFreeAsync); a DeviceBuffer is freed (cudaFree) only
//    after its owner has waited for the work that used it.
// Before this rule, a DeviceTensor's zero-fill ran on the legacy stream
// without a wait, and a receive into a fresh tensor could land before the
// fill and be wiped (docs/gpu.md tells what that looked like).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ops/tensor.hpp"
#include "transport/transport.hpp"

namespace ringlab::nccl {

// cudaMalloc'd bytes on one GPU, freed (cudaFree) with the object. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Zero bytes allocate nothing (data() is null). Throws CommError with
  // CUDA's reason (out of memory, ...) naming the size and the GPU.
  DeviceBuffer(std::size_t bytes, int device);

  std::byte* data() const { return storage_.get(); }
  std::size_t size() const { return size_; }
  int device() const { return device_; }
  MutBytes span() const { return {data(), size_}; }

  // Stream-ordered memory as a Transport Buffer (Transport::allocate): taken
  // from the device's memory pool in `stream`'s order (cudaMallocAsync) and
  // given back in that order (cudaFreeAsync) when the last holder lets go,
  // so that freeing never blocks the host. Only work on `stream`, or ordered
  // after it by an event, may use it. `owner` (the communicator that owns
  // the stream) is kept alive until then.
  static Buffer make_stream_buffer(std::size_t bytes, int device, cudaStream_t stream,
                                   std::shared_ptr<const void> owner);

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> storage_;
  std::size_t size_ = 0;
  int device_ = -1;
};

// A Tensor's dtype and shape with its elements in GPU memory.
class DeviceTensor {
 public:
  DeviceTensor() = default;
  // Zero-filled, like Tensor(dtype, shape); the fill has finished when the
  // constructor returns (the stream rule above).
  DeviceTensor(DType dtype, std::vector<std::int64_t> shape, int device);
  static DeviceTensor zeros(std::int64_t n, DType dtype, int device);

  // Host -> GPU `device` and back. Both wait for the copy (with `timeout`).
  // download() copies what is in memory now: wait for the stream that wrote
  // it first.
  static DeviceTensor upload(const Tensor& host, int device, Duration timeout = kDefaultTimeout);
  Tensor download(Duration timeout = kDefaultTimeout) const;

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::size_t numel() const { return numel_; }
  std::size_t nbytes() const { return buffer_.size(); }
  int device() const { return buffer_.device(); }
  std::byte* data() const { return buffer_.data(); }

 private:
  DType dtype_ = DType::Float32;
  std::vector<std::int64_t> shape_{0};
  std::size_t numel_ = 0;
  DeviceBuffer buffer_;
};

}  // namespace ringlab::nccl
