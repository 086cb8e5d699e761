// The CUDA reduction kernels against the CPU reference (reduce_host /
// divide_host in ops/reduce_op.hpp): every dtype, every op that
// applies, sizes from 0 to 256 M elements, and slices that start off a
// 16-byte boundary (the kernels' scalar head/tail and unaligned paths).
// Inputs are small integers (quarters for floats), so every sum, product,
// minimum and quotient is exact and the results must match bit for bit.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/reduce_op.hpp"
#include "ops/tensor.hpp"
#include "transport/nccl/cuda_check.hpp"
#include "transport/nccl/device_memory.hpp"
#include "transport/nccl/reduce_kernels.hpp"

using namespace ringlab;
using nccl::DeviceTensor;

namespace {

constexpr Duration kWait = std::chrono::minutes(2);

// Value `i` of input `which`: an integer in [-100, 100] from a multiplicative
// hash (so neighbours differ, and acc and in differ), a quarter of it for floats.
Tensor pattern(DType dtype, std::size_t n, std::uint64_t which) {
  Tensor t(dtype, {static_cast<std::int64_t>(n)});
  visit_dtype(dtype, [&]<typename T>() {
    auto out = t.data<T>();
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t h = (i + 1 + which * 0x9E3779B97F4A7C15ull) * 0x2545F4914F6CDD1Dull;
      const auto v = static_cast<std::int64_t>((h >> 33) % 201) - 100;
      if constexpr (std::is_floating_point_v<T>) out[i] = static_cast<T>(v) / 4;
      else out[i] = static_cast<T>(v);
    }
  });
  return t;
}

void sync_device() {
  nccl::wait_for_stream(cudaStreamPerThread, -1, kWait, "the reduction kernel");
}

// Runs the kernel on elements [acc_offset, acc_offset + n) of acc and
// [in_offset, ...) of in, and compares the whole of acc with the reference.
void check_reduce(DType dtype, ReduceOp op, std::size_t n, std::size_t acc_offset = 0,
                  std::size_t in_offset = 0) {
  CAPTURE(dtype_name(dtype));
  CAPTURE(op_name(op));
  CAPTURE(n);
  CAPTURE(acc_offset);
  CAPTURE(in_offset);
  const Tensor acc_host = pattern(dtype, n + acc_offset, 1);
  const Tensor in_host = pattern(dtype, n + in_offset, 2);
  Tensor expected = acc_host;
  const std::size_t esize = element_size(dtype);
  reduce_host(dtype, op, expected.bytes().data() + acc_offset * esize,
              in_host.bytes().data() + in_offset * esize, n);

  DeviceTensor acc = DeviceTensor::upload(acc_host, 0, kWait);
  const DeviceTensor in = DeviceTensor::upload(in_host, 0, kWait);
  nccl::reduce_on_device(dtype, op, acc.data() + acc_offset * esize,
                         in.data() + in_offset * esize, n, cudaStreamPerThread);
  sync_device();
  const Tensor got = acc.download(kWait);
  // Bit for bit; on a mismatch, report the first differing element.
  if (std::memcmp(got.bytes().data(), expected.bytes().data(), expected.nbytes()) != 0) {
    std::size_t i = 0;
    while (std::memcmp(got.bytes().data() + i * esize, expected.bytes().data() + i * esize,
                       esize) == 0)
      ++i;
    FAIL_CHECK("element " << i << ": GPU " << got.item_as_double(i) << ", CPU reference "
                          << expected.item_as_double(i));
  }
}

std::vector<ReduceOp> ops_for(DType dtype) {
  std::vector<ReduceOp> ops;
  for (ReduceOp op : kAllReduceOps)
    if (op != ReduceOp::AVG && op_applies(op, dtype)) ops.push_back(op);
  return ops;
}

}  // namespace

TEST_CASE("every op and dtype, small and odd sizes") {
  // 0 (nothing), sizes below one vector, around vector and block boundaries,
  // and a few thousand (several blocks, plus a tail).
  const std::size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 255, 256, 257, 1023, 4099};
  for (DType dtype : kAllDTypes)
    for (ReduceOp op : ops_for(dtype))
      for (std::size_t n : sizes) check_reduce(dtype, op, n);
}

TEST_CASE("slices off a 16-byte boundary: same misalignment (head) and different (scalar path)") {
  for (DType dtype : kAllDTypes)
    for (ReduceOp op : ops_for(dtype))
      for (std::size_t offset : {1, 2, 3})
        for (std::size_t n : {1, 6, 1000, 65537}) {
          check_reduce(dtype, op, n, offset, offset);
          check_reduce(dtype, op, n, offset, 0);
          check_reduce(dtype, op, n, 0, offset);
        }
}

TEST_CASE("every op and dtype at 1 M + 3 elements") {
  for (DType dtype : kAllDTypes)
    for (ReduceOp op : ops_for(dtype)) check_reduce(dtype, op, (std::size_t{1} << 20) + 3);
}

TEST_CASE("every op and dtype at 256 M elements") {
  for (DType dtype : kAllDTypes)
    for (ReduceOp op : ops_for(dtype)) check_reduce(dtype, op, std::size_t{256} << 20);
}

TEST_CASE("AVG reduces as SUM, as on the host") {
  check_reduce(DType::Float32, ReduceOp::AVG, 1001);
  check_reduce(DType::Float64, ReduceOp::AVG, 1001);
}

TEST_CASE("divide (AVG's last step) matches divide_host") {
  for (DType dtype : {DType::Float32, DType::Float64})
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{4099},
                          (std::size_t{1} << 20) + 3, std::size_t{256} << 20})
      for (int world : {1, 3, 8}) {
        CAPTURE(dtype_name(dtype));
        CAPTURE(n);
        CAPTURE(world);
        const Tensor host = pattern(dtype, n, 3);
        Tensor expected = host;
        divide_host(dtype, expected.bytes().data(), n, world);
        DeviceTensor data = DeviceTensor::upload(host, 0, kWait);
        nccl::divide_on_device(dtype, data.data(), n, world, cudaStreamPerThread);
        sync_device();
        CHECK(data.download(kWait).same_values(expected));
      }
}

TEST_CASE("ops that do not apply are refused before any launch") {
  DeviceTensor f = DeviceTensor::zeros(4, DType::Float32, 0);
  DeviceTensor i = DeviceTensor::zeros(4, DType::Int32, 0);
  CHECK_THROWS_AS(nccl::reduce_on_device(DType::Float32, ReduceOp::BXOR, f.data(), f.data(), 4,
                                         cudaStreamPerThread),
                  std::invalid_argument);
  CHECK_THROWS_AS(nccl::divide_on_device(DType::Int32, i.data(), 4, 2, cudaStreamPerThread),
                  std::invalid_argument);
}
