// GPU memory for the NCCL backend. ringlab's Tensor is host memory and stays
// that way; a DeviceTensor is its GPU counterpart (same dtype and shape) with
// explicit upload/download, so every host<->device copy is visible in the code.
#pragma once

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

  // The same memory as a Transport Buffer (shared ownership, freed by the
  // last holder), for Transport::allocate.
  static Buffer make_transport_buffer(std::size_t bytes, int device);

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
  // Zero-filled, like Tensor(dtype, shape).
  DeviceTensor(DType dtype, std::vector<std::int64_t> shape, int device);
  static DeviceTensor zeros(std::int64_t n, DType dtype, int device);

  // Host -> GPU `device` and back. Both wait for the copy (with `timeout`).
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
