// Element-wise reduction kernels: 16-byte vector loads and stores, a
// grid-stride loop over the vectors, and the few unaligned elements at either
// end done one at a time. One kernel per (dtype, op), chosen on the host.
#include "transport/nccl/reduce_kernels.hpp"

#include "transport/transport.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ringlab::nccl {

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr std::size_t kVectorBytes = 16;

// One 16-byte load: 4 int32/float32 or 2 int64/float64.
template <typename T>
struct alignas(kVectorBytes) Vector {
  static constexpr int kLanes = kVectorBytes / sizeof(T);
  T lane[kLanes];
};

// The ops, with exactly the host's semantics (reduce_host uses std::min(acc, in),
// which keeps acc unless in < acc, and std::max(acc, in), which keeps acc unless
// acc < in; that decides which zero survives min(0.0, -0.0)).
struct Sum {
  template <typename T> __device__ T operator()(T acc, T in) const { return acc + in; }
};
struct Product {
  template <typename T> __device__ T operator()(T acc, T in) const { return acc * in; }
};
struct Min {
  template <typename T> __device__ T operator()(T acc, T in) const { return in < acc ? in : acc; }
};
struct Max {
  template <typename T> __device__ T operator()(T acc, T in) const { return acc < in ? in : acc; }
};
struct BitAnd {
  template <typename T> __device__ T operator()(T acc, T in) const { return acc & in; }
};
struct BitOr {
  template <typename T> __device__ T operator()(T acc, T in) const { return acc | in; }
};
struct BitXor {
  template <typename T> __device__ T operator()(T acc, T in) const { return acc ^ in; }
};
// Unary: in is ignored.
template <typename T>
struct DivideBy {
  T divisor;
  __device__ T operator()(T acc, T) const { return acc / divisor; }
};

// How count elements at `acc` split into scalar edges and whole vectors.
//
//   n        elements in total
//   L        lanes per 16-byte vector (Vector<T>::kLanes)
//   head     elements before acc's first 16-byte-aligned element (< L)
//   vectors  whole vectors starting at element head
//   tail     elements after head + vectors * L (< L)
//
// Vectors are used only when acc and in share the same misalignment (Elems
// slices start at any element; then both need the same head to line up);
// otherwise head = vectors = 0 and every element is a scalar (slow path).
template <typename T>
struct Layout {
  std::size_t head = 0;
  std::size_t vectors = 0;
  std::size_t n = 0;
  __host__ __device__ std::size_t tail_begin() const { return head + vectors * Vector<T>::kLanes; }
  __host__ __device__ std::size_t scalars() const { return head + (n - tail_begin()); }
};

template <typename T>
Layout<T> layout_of(const T* acc, const T* in, std::size_t n, bool unary) {
  constexpr std::size_t L = Vector<T>::kLanes;
  const auto acc_offset = reinterpret_cast<std::uintptr_t>(acc) % kVectorBytes;
  const auto in_offset = reinterpret_cast<std::uintptr_t>(in) % kVectorBytes;
  Layout<T> layout;
  layout.n = n;
  if ((!unary && acc_offset != in_offset) || acc_offset % sizeof(T) != 0) return layout;
  layout.head = std::min(n, ((kVectorBytes - acc_offset) % kVectorBytes) / sizeof(T));
  layout.vectors = (n - layout.head) / L;
  return layout;
}

// Grid-stride over the vectors; thread t < scalars() also does scalar t
// (the head first, then the tail). With vectors == 0 it is all scalars, done
// grid-stride too.
template <typename T, typename Op, bool kUnary>
__global__ void __launch_bounds__(kThreadsPerBlock)
    elementwise_kernel(T* __restrict__ acc, const T* __restrict__ in, Layout<T> layout, Op op) {
  constexpr int L = Vector<T>::kLanes;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;

  auto* acc_vectors = reinterpret_cast<Vector<T>*>(acc + layout.head);
  const auto* in_vectors = reinterpret_cast<const Vector<T>*>(in + layout.head);
  for (std::size_t v = first; v < layout.vectors; v += stride) {
    Vector<T> a = acc_vectors[v];
    if constexpr (kUnary) {
#pragma unroll
      for (int l = 0; l < L; ++l) a.lane[l] = op(a.lane[l], a.lane[l]);
    } else {
      const Vector<T> b = in_vectors[v];
#pragma unroll
      for (int l = 0; l < L; ++l) a.lane[l] = op(a.lane[l], b.lane[l]);
    }
    acc_vectors[v] = a;
  }

  const std::size_t scalars = layout.scalars();
  const std::size_t tail_begin = layout.tail_begin();
  for (std::size_t s = first; s < scalars; s += stride) {
    const std::size_t i = s < layout.head ? s : tail_begin + (s - layout.head);
    acc[i] = op(acc[i], kUnary ? acc[i] : in[i]);
  }
}

// Enough blocks to fill every SM (the loop strides over the rest), no more
// than the work needs.
unsigned grid_size(std::size_t work_items) {
  int device = 0, sms = 0, threads_per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
  const std::size_t resident =
      static_cast<std::size_t>(std::max(sms, 1)) * std::max(threads_per_sm / kThreadsPerBlock, 1);
  const std::size_t needed = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(needed, resident)));
}

void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw CommError(std::string("launching the ") + what + " kernel: " +
                    cudaGetErrorString(status));
}

template <typename T, bool kUnary, typename Op>
void launch(T* acc, const T* in, std::size_t n, Op op, cudaStream_t stream, const char* what) {
  const Layout<T> layout = layout_of(acc, in, n, kUnary);
  const std::size_t work = std::max(layout.vectors, layout.scalars());
  elementwise_kernel<T, Op, kUnary>
      <<<grid_size(work), kThreadsPerBlock, 0, stream>>>(acc, in, layout, op);
  check_launch(what);
}

template <typename T>
void reduce_typed(ReduceOp op, T* acc, const T* in, std::size_t n, cudaStream_t stream) {
  switch (op) {
    case ReduceOp::AVG:
    case ReduceOp::SUM: return launch<T, false>(acc, in, n, Sum{}, stream, "sum");
    case ReduceOp::PRODUCT: return launch<T, false>(acc, in, n, Product{}, stream, "product");
    case ReduceOp::MIN: return launch<T, false>(acc, in, n, Min{}, stream, "min");
    case ReduceOp::MAX: return launch<T, false>(acc, in, n, Max{}, stream, "max");
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      if constexpr (std::is_integral_v<T>) {
        if (op == ReduceOp::BAND) return launch<T, false>(acc, in, n, BitAnd{}, stream, "band");
        if (op == ReduceOp::BOR) return launch<T, false>(acc, in, n, BitOr{}, stream, "bor");
        return launch<T, false>(acc, in, n, BitXor{}, stream, "bxor");
      }
      break;
  }
  check_op(op, dtype_of<T>());  // throws: the op does not apply to T
}

}  // namespace

void reduce_on_device(DType dtype, ReduceOp op, void* acc, const void* in, std::size_t count,
                      cudaStream_t stream) {
  check_op(wire_op(op), dtype);
  if (count == 0) return;
  visit_dtype(dtype, [&]<typename T>() {
    reduce_typed<T>(op, static_cast<T*>(acc), static_cast<const T*>(in), count, stream);
  });
}

void divide_on_device(DType dtype, void* data, std::size_t count, int divisor,
                      cudaStream_t stream) {
  check_op(ReduceOp::AVG, dtype);
  if (divisor <= 0)
    throw std::invalid_argument("divide_on_device: the divisor (world size) must be positive, got " +
                                std::to_string(divisor));
  if (count == 0) return;
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* p = static_cast<T*>(data);
      launch<T, true>(p, p, count, DivideBy<T>{static_cast<T>(divisor)}, stream, "divide");
    }
  });
}

}  // namespace ringlab::nccl
