#include "transport/nccl/device_memory.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>

#include "transport/nccl/cuda_check.hpp"

namespace ringlab::nccl {

namespace {
std::byte* allocate_on(std::size_t bytes, int device) {
  if (bytes == 0) return nullptr;
  DeviceGuard on_device(device, -1);
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), -1,
             "cudaMalloc of " + std::to_string(bytes) + " bytes on GPU " + std::to_string(device));
  return static_cast<std::byte*>(p);
}

std::size_t count_elements(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("DeviceTensor: negative dimension " + std::to_string(d));
    n *= static_cast<std::size_t>(d);
  }
  return n;
}
}  // namespace

void DeviceBuffer::Free::operator()(std::byte* p) const {
  // cudaFree waits for work still using the memory; nothing to report from a
  // destructor, so errors are dropped (the next CUDA call reports them).
  if (p) cudaFree(p);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, int device)
    : storage_(allocate_on(bytes, device)), size_(bytes), device_(device) {}

Buffer DeviceBuffer::make_stream_buffer(std::size_t bytes, int device, cudaStream_t stream,
                                        std::shared_ptr<const void> owner) {
  if (bytes == 0) return Buffer{nullptr, 0};
  DeviceGuard on_device(device, -1);
  void* p = nullptr;
  check_cuda(cudaMallocAsync(&p, bytes, stream), -1,
             "cudaMallocAsync of " + std::to_string(bytes) + " bytes on GPU " +
                 std::to_string(device));
  auto release = [device, stream, owner = std::move(owner)](std::byte* q) {
    // Nothing to report from a destructor; the next CUDA call reports errors.
    int previous = -1;
    cudaGetDevice(&previous);
    if (previous != device) cudaSetDevice(device);
    cudaFreeAsync(q, stream);
    if (previous >= 0 && previous != device) cudaSetDevice(previous);
  };
  return Buffer{std::shared_ptr<std::byte[]>(static_cast<std::byte*>(p), std::move(release)),
                bytes};
}

DeviceTensor::DeviceTensor(DType dtype, std::vector<std::int64_t> shape, int device)
    : dtype_(dtype),
      shape_(std::move(shape)),
      numel_(count_elements(shape_)),
      buffer_(numel_ * element_size(dtype), device) {
  if (buffer_.size() == 0) return;
  DeviceGuard on_device(device, -1);
  // On the per-thread stream, waited for: a cudaMemset on the legacy stream
  // would not be ordered before the communicator's (non-blocking) stream.
  const std::string what = "zero-filling a DeviceTensor on GPU " + std::to_string(device);
  check_cuda(cudaMemsetAsync(buffer_.data(), 0, buffer_.size(), cudaStreamPerThread), -1, what);
  wait_for_stream(cudaStreamPerThread, -1, kDefaultTimeout, what);
}

DeviceTensor DeviceTensor::zeros(std::int64_t n, DType dtype, int device) {
  return DeviceTensor(dtype, {n}, device);
}

DeviceTensor DeviceTensor::upload(const Tensor& host, int device, Duration timeout) {
  DeviceTensor tensor;
  tensor.dtype_ = host.dtype();
  tensor.shape_ = host.shape();
  tensor.numel_ = host.numel();
  tensor.buffer_ = DeviceBuffer(host.nbytes(), device);
  if (host.nbytes() == 0) return tensor;
  DeviceGuard on_device(device, -1);
  const std::string what = "copying " + std::to_string(host.nbytes()) + " bytes to GPU " +
                           std::to_string(device);
  check_cuda(cudaMemcpyAsync(tensor.data(), host.bytes().data(), host.nbytes(),
                             cudaMemcpyHostToDevice, cudaStreamPerThread),
             -1, what);
  wait_for_stream(cudaStreamPerThread, -1, timeout, what);
  return tensor;
}

Tensor DeviceTensor::download(Duration timeout) const {
  Tensor host(dtype_, shape_);
  if (nbytes() == 0) return host;
  DeviceGuard on_device(device(), -1);
  const std::string what = "copying " + std::to_string(nbytes()) + " bytes from GPU " +
                           std::to_string(device());
  check_cuda(cudaMemcpyAsync(host.bytes().data(), data(), nbytes(), cudaMemcpyDeviceToHost,
                             cudaStreamPerThread),
             -1, what);
  wait_for_stream(cudaStreamPerThread, -1, timeout, what);
  return host;
}

}  // namespace ringlab::nccl
