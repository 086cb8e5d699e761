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

Buffer DeviceBuffer::make_transport_buffer(std::size_t bytes, int device) {
  std::byte* p = allocate_on(bytes, device);
  return Buffer{std::shared_ptr<std::byte[]>(p, [](std::byte* q) { Free{}(q); }), bytes};
}

DeviceTensor::DeviceTensor(DType dtype, std::vector<std::int64_t> shape, int device)
    : dtype_(dtype),
      shape_(std::move(shape)),
      numel_(count_elements(shape_)),
      buffer_(numel_ * element_size(dtype), device) {
  if (buffer_.size() == 0) return;
  DeviceGuard on_device(device, -1);
  check_cuda(cudaMemset(buffer_.data(), 0, buffer_.size()), -1,
             "zero-filling a DeviceTensor on GPU " + std::to_string(device));
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
