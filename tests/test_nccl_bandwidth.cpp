// How fast the reduction kernels are, against the fastest thing the same GPU
// can do with the same bytes: a device-to-device copy (cudaMemcpyAsync).
//
//   copy bandwidth   = 2 * bytes / time    (reads one buffer, writes one)
//   reduce bandwidth = 3 * bytes / time    (reads acc and in, writes acc)
//
// The goal is a reduction at >= 80% of the copy's bandwidth: at that point the
// kernel is limited by memory, as an element-wise op should be. Prints a table
// (run the program directly to see it) and checks the goal for 256 M elements.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstdio>

#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/device_memory.hpp"
#include "transport/nccl/reduce_kernels.hpp"

using namespace ringlab;

namespace {

constexpr Duration kWait = std::chrono::minutes(2);
constexpr int kWarmup = 3;
constexpr int kIterations = 20;

// Average milliseconds of `work` over kIterations, timed with CUDA events on `stream`.
template <typename Work>
double time_ms(cudaStream_t stream, Work&& work) {
  for (int i = 0; i < kWarmup; ++i) work();
  cudaEvent_t start = nullptr, stop = nullptr;
  nccl::check_cuda(cudaEventCreate(&start), -1, "cudaEventCreate");
  nccl::check_cuda(cudaEventCreate(&stop), -1, "cudaEventCreate");
  nccl::check_cuda(cudaEventRecord(start, stream), -1, "cudaEventRecord");
  for (int i = 0; i < kIterations; ++i) work();
  nccl::check_cuda(cudaEventRecord(stop, stream), -1, "cudaEventRecord");
  nccl::wait_for_stream(stream, -1, kWait, "the timed runs");
  float ms = 0;
  nccl::check_cuda(cudaEventElapsedTime(&ms, start, stop), -1, "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / kIterations;
}

double gb_per_s(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

}  // namespace

TEST_CASE("reduction kernels reach >= 80% of a device-to-device copy's bandwidth") {
  nccl::check_cuda(cudaSetDevice(0), -1, "cudaSetDevice(0)");
  cudaDeviceProp properties{};
  nccl::check_cuda(cudaGetDeviceProperties(&properties, 0), -1, "cudaGetDeviceProperties");
  const std::size_t n = std::size_t{256} << 20;  // elements
  cudaStream_t stream = cudaStreamPerThread;

  std::printf("GPU 0: %s; %zu M elements per buffer, %d timed runs each\n", properties.name,
              n >> 20, kIterations);
  std::printf("%-8s %-5s %12s %12s %12s %8s\n", "dtype", "op", "bytes", "copy GB/s", "reduce GB/s",
              "ratio");
  struct Case {
    DType dtype;
    ReduceOp op;
  };
  const Case cases[] = {{DType::Float32, ReduceOp::SUM}, {DType::Float64, ReduceOp::SUM},
                        {DType::Int32, ReduceOp::SUM},   {DType::Int64, ReduceOp::SUM},
                        {DType::Float32, ReduceOp::MAX}, {DType::Float32, ReduceOp::PRODUCT},
                        {DType::Int32, ReduceOp::BXOR},  {DType::Int64, ReduceOp::MIN},
                        // The narrow dtypes: float16 and bfloat16 widen each lane to float
                        // and round back; uint8 and bool move 16 lanes per load.
                        {DType::Float16, ReduceOp::SUM}, {DType::BFloat16, ReduceOp::SUM},
                        {DType::Float16, ReduceOp::MAX}, {DType::UInt8, ReduceOp::SUM},
                        {DType::Bool, ReduceOp::SUM}};
  for (const Case& c : cases) {
    CAPTURE(dtype_name(c.dtype));
    CAPTURE(op_name(c.op));
    const std::size_t bytes = n * element_size(c.dtype);
    nccl::DeviceBuffer acc(bytes, 0), in(bytes, 0), copy(bytes, 0);
    // On the stream the timed work runs on (device_memory.hpp's stream rule).
    nccl::check_cuda(cudaMemsetAsync(acc.data(), 0, bytes, stream), -1, "cudaMemsetAsync");
    nccl::check_cuda(cudaMemsetAsync(in.data(), 0, bytes, stream), -1, "cudaMemsetAsync");
    const double copy_ms = time_ms(stream, [&] {
      nccl::check_cuda(cudaMemcpyAsync(copy.data(), in.data(), bytes, cudaMemcpyDeviceToDevice,
                                       stream),
                       -1, "cudaMemcpyAsync");
    });
    const double reduce_ms = time_ms(stream, [&] {
      nccl::reduce_on_device(c.dtype, c.op, acc.data(), in.data(), n, stream);
    });
    const double copy_bw = gb_per_s(2.0 * static_cast<double>(bytes), copy_ms);
    const double reduce_bw = gb_per_s(3.0 * static_cast<double>(bytes), reduce_ms);
    std::printf("%-8s %-5s %12zu %12.1f %12.1f %7.0f%%\n", std::string(dtype_name(c.dtype)).c_str(),
                std::string(op_name(c.op)).c_str(), bytes, copy_bw, reduce_bw,
                100.0 * reduce_bw / copy_bw);
    CHECK(reduce_bw >= 0.8 * copy_bw);
  }
}
