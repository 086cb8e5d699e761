// Element-wise reduction kernels: 16-byte vector loads and stores, a
// grid-stride loop over the vectors, and the few unaligned elements at either
// end done one at a time. One kernel per (dtype, op), chosen on the host.
// Every dtype of ops/dtype.hpp has them; float16 and bfloat16 widen each
// lane to float and round back, which costs nothing a memory-bound kernel
// notices (16 bytes are 8 lanes either way).
#include "transport/nccl/reduce_kernels.hpp"

#include "transport/transport.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ringlab::nccl {

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr std::size_t kVectorBytes = 16;

// The type a kernel works on for each dtype: the same bits, as CUDA names
// them (bool as its byte, float16 and bfloat16 as __half and __nv_bfloat16).
template <typename T> struct OnDevice { using type = T; };
template <> struct OnDevice<bool> { using type = std::uint8_t; };
template <> struct OnDevice<Half> { using type = __half; };
template <> struct OnDevice<BFloat16> { using type = __nv_bfloat16; };
static_assert(sizeof(__half) == sizeof(Half) && sizeof(__nv_bfloat16) == sizeof(BFloat16));

// One 16-byte load: 16 bytes of uint8, 8 halves, 4 int32/float32, 2 int64/float64.
template <typename T>
struct alignas(kVectorBytes) Vector {
  static constexpr int kLanes = kVectorBytes / sizeof(T);
  T lane[kLanes];
};

// The element arithmetic, with exactly the host's semantics (ops/reduce_op.cpp):
// integers wrap (computed unsigned, where C++ and CUDA define wrapping);
// bool is or / and / xor on bytes; float16 and bfloat16 are widened to float,
// combined and rounded back to nearest even at every step; MIN and MAX
// propagate nan (torch.minimum, torch.maximum) and keep acc of two equal
// values (Gloo's std::min, std::max).
template <typename T> struct Arith {
  static __device__ T sum(T a, T b) { return a + b; }
  static __device__ T product(T a, T b) { return a * b; }
  static __device__ T min(T a, T b) { return (b < a || b != b) ? b : a; }
  static __device__ T max(T a, T b) { return (a < b || b != b) ? b : a; }
  static __device__ T divide(T a, int d) { return a / static_cast<T>(d); }
};
template <typename T>
  requires(std::is_integral_v<T>)
struct Arith<T> {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  static __device__ T sum(T a, T b) { return static_cast<T>(U(a) + U(b)); }
  static __device__ T product(T a, T b) { return static_cast<T>(U(a) * U(b)); }
  static __device__ T min(T a, T b) { return b < a ? b : a; }
  static __device__ T max(T a, T b) { return a < b ? b : a; }
};
// bool's bytes (a byte other than 0 or 1 is true; results are 0 or 1).
struct BoolArith {
  static __device__ std::uint8_t sum(std::uint8_t a, std::uint8_t b) { return (a | b) != 0; }
  static __device__ std::uint8_t product(std::uint8_t a, std::uint8_t b) {
    return (a != 0) & (b != 0);
  }
};
template <typename H, float (*Widen)(H), H (*Narrow)(float)> struct Arith16 {
  static __device__ H sum(H a, H b) { return Narrow(Widen(a) + Widen(b)); }
  static __device__ H product(H a, H b) { return Narrow(Widen(a) * Widen(b)); }
  static __device__ H min(H a, H b) {
    const float x = Widen(a), y = Widen(b);
    return (y < x || y != y) ? b : a;
  }
  static __device__ H max(H a, H b) {
    const float x = Widen(a), y = Widen(b);
    return (x < y || y != y) ? b : a;
  }
  static __device__ H divide(H a, int d) { return Narrow(Widen(a) / static_cast<float>(d)); }
};
__device__ float widen_half(__half h) { return __half2float(h); }
__device__ __half narrow_half(float f) { return __float2half_rn(f); }
__device__ float widen_bf16(__nv_bfloat16 h) { return __bfloat162float(h); }
__device__ __nv_bfloat16 narrow_bf16(float f) { return __float2bfloat16_rn(f); }
template <> struct Arith<__half> : Arith16<__half, widen_half, narrow_half> {};
template <> struct Arith<__nv_bfloat16> : Arith16<__nv_bfloat16, widen_bf16, narrow_bf16> {};

// The ops as functors on the device type D (A: its arithmetic).
template <typename A> struct Sum {
  template <typename D> __device__ D operator()(D acc, D in) const { return A::sum(acc, in); }
};
template <typename A> struct Product {
  template <typename D> __device__ D operator()(D acc, D in) const { return A::product(acc, in); }
};
template <typename A> struct Min {
  template <typename D> __device__ D operator()(D acc, D in) const { return A::min(acc, in); }
};
template <typename A> struct Max {
  template <typename D> __device__ D operator()(D acc, D in) const { return A::max(acc, in); }
};
struct BitAnd {
  template <typename D> __device__ D operator()(D acc, D in) const { return acc & in; }
};
struct BitOr {
  template <typename D> __device__ D operator()(D acc, D in) const { return acc | in; }
};
struct BitXor {
  template <typename D> __device__ D operator()(D acc, D in) const { return acc ^ in; }
};
struct BoolXor {
  __device__ std::uint8_t operator()(std::uint8_t acc, std::uint8_t in) const {
    return (acc != 0) != (in != 0);
  }
};
// Unary: in is ignored.
template <typename A>
struct DivideBy {
  int divisor;
  template <typename D> __device__ D operator()(D acc, D) const { return A::divide(acc, divisor); }
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

// D is the device type; the op was checked against the dtype (check_op).
template <typename D>
void reduce_typed(ReduceOp op, D* acc, const D* in, std::size_t n, cudaStream_t stream) {
  using A = Arith<D>;
  switch (op) {
    case ReduceOp::AVG:
    case ReduceOp::SUM: return launch<D, false>(acc, in, n, Sum<A>{}, stream, "sum");
    case ReduceOp::PRODUCT: return launch<D, false>(acc, in, n, Product<A>{}, stream, "product");
    case ReduceOp::MIN: return launch<D, false>(acc, in, n, Min<A>{}, stream, "min");
    case ReduceOp::MAX: return launch<D, false>(acc, in, n, Max<A>{}, stream, "max");
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      if constexpr (std::is_integral_v<D>) {
        if (op == ReduceOp::BAND) return launch<D, false>(acc, in, n, BitAnd{}, stream, "band");
        if (op == ReduceOp::BOR) return launch<D, false>(acc, in, n, BitOr{}, stream, "bor");
        return launch<D, false>(acc, in, n, BitXor{}, stream, "bxor");
      }
      break;
  }
}

// bool: or for SUM, MAX and BOR; and for PRODUCT, MIN and BAND; xor.
void reduce_bools(ReduceOp op, std::uint8_t* acc, const std::uint8_t* in, std::size_t n,
                  cudaStream_t stream) {
  switch (op) {
    case ReduceOp::AVG:  // refused by check_op
    case ReduceOp::SUM:
    case ReduceOp::MAX:
    case ReduceOp::BOR: return launch<std::uint8_t, false>(acc, in, n, Sum<BoolArith>{}, stream, "or");
    case ReduceOp::PRODUCT:
    case ReduceOp::MIN:
    case ReduceOp::BAND:
      return launch<std::uint8_t, false>(acc, in, n, Product<BoolArith>{}, stream, "and");
    case ReduceOp::BXOR: return launch<std::uint8_t, false>(acc, in, n, BoolXor{}, stream, "xor");
  }
}

}  // namespace

void reduce_on_device(DType dtype, ReduceOp op, void* acc, const void* in, std::size_t count,
                      cudaStream_t stream) {
  check_op(op, dtype);
  if (count == 0) return;
  visit_dtype(dtype, [&]<typename T>() {
    using D = typename OnDevice<T>::type;
    if constexpr (std::is_same_v<T, bool>)
      reduce_bools(op, static_cast<D*>(acc), static_cast<const D*>(in), count, stream);
    else
      reduce_typed<D>(op, static_cast<D*>(acc), static_cast<const D*>(in), count, stream);
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
    if constexpr (is_floating_type_v<T>) {
      using D = typename OnDevice<T>::type;
      D* p = static_cast<D*>(data);
      launch<D, true>(p, p, count, DivideBy<Arith<D>>{divisor}, stream, "divide");
    }
  });
}

}  // namespace ringlab::nccl
