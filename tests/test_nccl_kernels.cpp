// The CUDA reduction kernels against the CPU reference (reduce_host /
// divide_host in ops/reduce_op.hpp): every dtype, every op that
// applies, sizes from 0 to 256 M elements, and slices that start off a
// 16-byte boundary (the kernels' scalar head/tail and unaligned paths).
// Inputs are small integers (quarters for floats), so every sum, product,
// minimum and quotient is exact, except bfloat16's products and float16's
// and bfloat16's quotients, which both sides round to nearest even: the
// results must match bit for bit.
//
// Up to a few million elements every element is compared. At 256 M (2 GiB of
// float64: offsets past 2^31 bytes) the inputs repeat with periods of 65537
// and 65539 elements, built on the GPU by doubling copies, so that the host
// makes only one period of each; the result is then checked on samples: the
// first and last 65536 elements and every 4093rd in between (a prime stride,
// so the samples fall on every lane of the 16-byte vectors), fetched with one
// strided copy and compared with reduce_host on the same samples. That keeps
// the program under 30 s on an H100, where the full host reference of every
// 256 M case took 136 s.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
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
      if constexpr (is_floating_type_v<T>) out[i] = static_cast<T>(static_cast<double>(v) / 4);
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

namespace {

constexpr std::size_t kHuge = std::size_t{256} << 20;
constexpr std::size_t kEdge = 65536;
constexpr std::size_t kStride = 4093;

// n elements on GPU 0 whose element i is pattern(dtype, period, which)[i % period].
DeviceTensor periodic(DType dtype, std::size_t n, std::uint64_t which, std::size_t period) {
  DeviceTensor t(dtype, {static_cast<std::int64_t>(n)}, 0);
  const Tensor one = pattern(dtype, std::min(n, period), which);
  const std::size_t e = element_size(dtype);
  nccl::check_cuda(cudaMemcpyAsync(t.data(), one.bytes().data(), one.nbytes(),
                                   cudaMemcpyHostToDevice, cudaStreamPerThread),
                   -1, "uploading one period");
  for (std::size_t have = one.numel(); have < n; have *= 2) {
    const std::size_t more = std::min(have, n - have);
    nccl::check_cuda(cudaMemcpyAsync(t.data() + have * e, t.data(), more * e,
                                     cudaMemcpyDeviceToDevice, cudaStreamPerThread),
                     -1, "doubling the pattern");
  }
  sync_device();
  return t;
}

std::vector<std::size_t> sample_indices(std::size_t n) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < std::min(n, kEdge); ++i) at.push_back(i);
  for (std::size_t i = kEdge; i + kEdge < n; i += kStride) at.push_back(i);
  for (std::size_t i = n > kEdge ? std::max(n - kEdge, kEdge) : n; i < n; ++i) at.push_back(i);
  return at;
}

// The elements of `t` at `at` (sorted), copied back: the edges whole, the
// middle with one strided copy.
Tensor fetch(const DeviceTensor& t, const std::vector<std::size_t>& at) {
  Tensor out(t.dtype(), {static_cast<std::int64_t>(at.size())});
  const std::size_t e = element_size(t.dtype());
  std::size_t k = 0;
  while (k < at.size()) {
    // A run of indices with one step: one 2D copy (width one element).
    std::size_t step = k + 1 < at.size() ? at[k + 1] - at[k] : 1;
    std::size_t end = k + 1;
    while (end < at.size() && at[end] - at[end - 1] == step) ++end;
    const cudaError_t copied =
        step == 1 ? cudaMemcpyAsync(out.bytes().data() + k * e, t.data() + at[k] * e,
                                    (end - k) * e, cudaMemcpyDeviceToHost, cudaStreamPerThread)
                  : cudaMemcpy2DAsync(out.bytes().data() + k * e, e, t.data() + at[k] * e,
                                      step * e, e, end - k, cudaMemcpyDeviceToHost,
                                      cudaStreamPerThread);
    nccl::check_cuda(copied, -1, "fetching samples");
    k = end;
  }
  sync_device();
  return out;
}

// The host pattern values at `at` of a periodic input.
Tensor periodic_at(DType dtype, const std::vector<std::size_t>& at, std::uint64_t which,
                   std::size_t period) {
  const Tensor one = pattern(dtype, period, which);
  Tensor out(dtype, {static_cast<std::int64_t>(at.size())});
  const std::size_t e = element_size(dtype);
  for (std::size_t k = 0; k < at.size(); ++k)
    std::memcpy(out.bytes().data() + k * e, one.bytes().data() + (at[k] % period) * e, e);
  return out;
}

void expect_same(const Tensor& got, const Tensor& expected, const std::vector<std::size_t>& at) {
  const std::size_t e = element_size(got.dtype());
  for (std::size_t k = 0; k < at.size(); ++k)
    if (std::memcmp(got.bytes().data() + k * e, expected.bytes().data() + k * e, e) != 0) {
      FAIL_CHECK("element " << at[k] << ": GPU " << got.item_as_double(k) << ", CPU reference "
                            << expected.item_as_double(k));
      return;
    }
}

constexpr std::size_t kAccPeriod = 65537, kInPeriod = 65539;

}  // namespace

TEST_CASE("every op and dtype at 256 M elements, checked on samples") {
  const std::vector<std::size_t> at = sample_indices(kHuge);
  for (DType dtype : kAllDTypes) {
    const DeviceTensor in = periodic(dtype, kHuge, 2, kInPeriod);
    const Tensor in_at = periodic_at(dtype, at, 2, kInPeriod);
    for (ReduceOp op : ops_for(dtype)) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(op_name(op));
      DeviceTensor acc = periodic(dtype, kHuge, 1, kAccPeriod);
      nccl::reduce_on_device(dtype, op, acc.data(), in.data(), kHuge, cudaStreamPerThread);
      sync_device();
      Tensor expected = periodic_at(dtype, at, 1, kAccPeriod);
      reduce_host(dtype, op, expected.bytes().data(), in_at.bytes().data(), at.size());
      expect_same(fetch(acc, at), expected, at);
    }
  }
}

TEST_CASE("AVG reduces as SUM, as on the host") {
  for (DType dtype : kAllDTypes)
    if (is_floating(dtype)) check_reduce(dtype, ReduceOp::AVG, 1001);
}

TEST_CASE("MIN and MAX propagate nan from either side, as the host does") {
  for (DType dtype : kAllDTypes) {
    if (!is_floating(dtype)) continue;
    CAPTURE(dtype_name(dtype));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor a = Tensor::of({nan, 1.0, 2.0, -0.0}, dtype), b = Tensor::of({1.0, nan, 3.0, 0.0}, dtype);
    for (ReduceOp op : {ReduceOp::MIN, ReduceOp::MAX}) {
      Tensor expected = a;
      reduce_host(dtype, op, expected.bytes().data(), b.bytes().data(), 4);
      DeviceTensor acc = DeviceTensor::upload(a, 0, kWait);
      const DeviceTensor in = DeviceTensor::upload(b, 0, kWait);
      nccl::reduce_on_device(dtype, op, acc.data(), in.data(), 4, cudaStreamPerThread);
      sync_device();
      const Tensor got = acc.download(kWait);
      CHECK(std::isnan(got.item_as_double(0)));
      CHECK(std::isnan(got.item_as_double(1)));
      CHECK(got.same_values(expected));
    }
  }
}

TEST_CASE("divide at 256 M elements, checked on samples") {
  const std::vector<std::size_t> at = sample_indices(kHuge);
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (int world : {1, 3, 8}) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(world);
      DeviceTensor data = periodic(dtype, kHuge, 3, kAccPeriod);
      nccl::divide_on_device(dtype, data.data(), kHuge, world, cudaStreamPerThread);
      sync_device();
      Tensor expected = periodic_at(dtype, at, 3, kAccPeriod);
      divide_host(dtype, expected.bytes().data(), at.size(), world);
      expect_same(fetch(data, at), expected, at);
    }
}

TEST_CASE("divide (AVG's last step) matches divide_host") {
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{4099},
                          (std::size_t{1} << 20) + 3})
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
