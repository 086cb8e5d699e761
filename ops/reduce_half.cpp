// float16 and bfloat16 reductions: widen to float, combine, round back to
// nearest even, one element at a time in the semantics, eight at a time in
// the code where the CPU allows it.
//
// float16 uses F16C's vcvtph2ps / vcvtps2ph (8 lanes; every x86-64 CPU since
// 2012 has them) when the CPU reports F16C at run time, otherwise the
// compiler's _Float16 conversion element by element. bfloat16's conversion
// is integer arithmetic (ops/half.hpp), which the compiler vectorizes; the
// loop is built twice, for AVX2 and for the baseline, and the CPU picks.
// GCC 12 does not vectorize _Float16 conversions itself (it converts lane by
// lane even with -mf16c), hence the intrinsics.
#include "ops/reduce_half.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define RINGLAB_X86 1
#else
#define RINGLAB_X86 0
#endif

namespace ringlab {

namespace {

// The op on two widened values. MIN and MAX propagate nan and keep a of two
// equal values, as reduce_host does for float.
template <ReduceOp Op>
[[gnu::always_inline]] inline float combine(float a, float b) {
  static_assert(Op == ReduceOp::SUM || Op == ReduceOp::PRODUCT || Op == ReduceOp::MIN ||
                Op == ReduceOp::MAX);
  if constexpr (Op == ReduceOp::SUM) return a + b;
  else if constexpr (Op == ReduceOp::PRODUCT) return a * b;
  else if constexpr (Op == ReduceOp::MIN) return ((b < a) | (b != b)) ? b : a;  // | : no branch
  else return ((a < b) | (b != b)) ? b : a;
}

struct HalfBits {
  static float load(std::uint16_t b) { return static_cast<float>(Half::from_bits(b)); }
  static std::uint16_t store(float f) { return Half(f).bits; }
};
struct BFloat16Bits {
  [[gnu::always_inline]] static float load(std::uint16_t b) { return bfloat16_value(b); }
  [[gnu::always_inline]] static std::uint16_t store(float f) { return bfloat16_bits(f); }
};

template <typename Bits, ReduceOp Op>
[[gnu::always_inline]] inline void scalar_loop(std::uint16_t* acc, const std::uint16_t* in,
                                               std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    acc[i] = Bits::store(combine<Op>(Bits::load(acc[i]), Bits::load(in[i])));
}

template <typename Bits>
[[gnu::always_inline]] inline void scalar_divide(std::uint16_t* data, std::size_t n, float d) {
  for (std::size_t i = 0; i < n; ++i) data[i] = Bits::store(Bits::load(data[i]) / d);
}

// The loops are instantiated per op and chosen by a switch (AVG adds); no
// lambda, because a lambda does not inherit its function's target attribute
// and the AVX2 and F16C bodies must be compiled inside those functions.
#define RINGLAB_SWITCH_OP(op, CALL)                        \
  switch (op) {                                            \
    case ReduceOp::AVG:                                    \
    case ReduceOp::SUM: CALL(ReduceOp::SUM); return;         \
    case ReduceOp::PRODUCT: CALL(ReduceOp::PRODUCT); return; \
    case ReduceOp::MIN: CALL(ReduceOp::MIN); return;         \
    case ReduceOp::MAX: CALL(ReduceOp::MAX); return;         \
    case ReduceOp::BAND:                                   \
    case ReduceOp::BOR:                                    \
    case ReduceOp::BXOR: return; /* refused by check_op */ \
  }

// ---- bfloat16: the same loop, vectorized by the compiler -------------------

template <ReduceOp Op>
void bfloat16_baseline_loop(std::uint16_t* acc, const std::uint16_t* in, std::size_t n) {
  scalar_loop<BFloat16Bits, Op>(acc, in, n);
}
#define RINGLAB_BF16_LOOP(OP) bfloat16_baseline_loop<OP>(acc, in, n)
void bfloat16_baseline(ReduceOp op, std::uint16_t* acc, const std::uint16_t* in, std::size_t n) {
  RINGLAB_SWITCH_OP(op, RINGLAB_BF16_LOOP)
}

#if RINGLAB_X86
// The loop inside a function of the target (inlined into a switch's cases
// of one, GCC 12 leaves it scalar).
template <ReduceOp Op>
[[gnu::target("avx2")]] void bfloat16_avx2_loop(std::uint16_t* acc, const std::uint16_t* in,
                                                std::size_t n) {
  scalar_loop<BFloat16Bits, Op>(acc, in, n);
}
#define RINGLAB_BF16_AVX2_LOOP(OP) bfloat16_avx2_loop<OP>(acc, in, n)
void bfloat16_avx2(ReduceOp op, std::uint16_t* acc, const std::uint16_t* in, std::size_t n) {
  RINGLAB_SWITCH_OP(op, RINGLAB_BF16_AVX2_LOOP)
}
#endif

// ---- float16: F16C's conversions, 8 lanes at a time -------------------------

#if RINGLAB_X86
template <ReduceOp Op>
[[gnu::target("avx,f16c"), gnu::always_inline]] inline __m256 combine8(__m256 a, __m256 b) {
  if constexpr (Op == ReduceOp::SUM) {
    return _mm256_add_ps(a, b);
  } else if constexpr (Op == ReduceOp::PRODUCT) {
    return _mm256_mul_ps(a, b);
  } else {
    const __m256 b_nan = _mm256_cmp_ps(b, b, _CMP_UNORD_Q);
    const __m256 b_wins = Op == ReduceOp::MIN ? _mm256_cmp_ps(b, a, _CMP_LT_OQ)
                                               : _mm256_cmp_ps(a, b, _CMP_LT_OQ);
    return _mm256_blendv_ps(a, b, _mm256_or_ps(b_wins, b_nan));
  }
}

constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

[[gnu::target("avx,f16c"), gnu::always_inline]] inline __m256 load8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
[[gnu::target("avx,f16c"), gnu::always_inline]] inline void store8(std::uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, kNearest));
}
[[gnu::target("avx,f16c"), gnu::always_inline]] inline float load1(std::uint16_t b) {
  return _cvtsh_ss(b);
}
[[gnu::target("avx,f16c"), gnu::always_inline]] inline std::uint16_t store1(float f) {
  // _mm_cvtps_ph rather than _cvtss_sh: clang's macro for the latter is a
  // compound literal (a C99 feature clang warns about in C++).
  return static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), kNearest), 0));
}

template <ReduceOp Op>
[[gnu::target("avx,f16c")]] void half_f16c_loop(std::uint16_t* acc, const std::uint16_t* in,
                                                std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store8(acc + i, combine8<Op>(load8(acc + i), load8(in + i)));
  for (; i < n; ++i) acc[i] = store1(combine<Op>(load1(acc[i]), load1(in[i])));
}

#define RINGLAB_F16C_LOOP(OP) half_f16c_loop<OP>(acc, in, n)

void half_f16c(ReduceOp op, std::uint16_t* acc, const std::uint16_t* in, std::size_t n) {
  RINGLAB_SWITCH_OP(op, RINGLAB_F16C_LOOP)
}

[[gnu::target("avx,f16c")]] void half_divide_f16c(std::uint16_t* data, std::size_t n, float d) {
  const __m256 divisor = _mm256_set1_ps(d);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store8(data + i, _mm256_div_ps(load8(data + i), divisor));
  for (; i < n; ++i) data[i] = store1(load1(data[i]) / d);
}
#endif

template <ReduceOp Op>
void half_baseline_loop(std::uint16_t* acc, const std::uint16_t* in, std::size_t n) {
  scalar_loop<HalfBits, Op>(acc, in, n);
}
#define RINGLAB_HALF_LOOP(OP) half_baseline_loop<OP>(acc, in, n)

void half_baseline(ReduceOp op, std::uint16_t* acc, const std::uint16_t* in, std::size_t n) {
  RINGLAB_SWITCH_OP(op, RINGLAB_HALF_LOOP)
}

bool has_avx2() {
#if RINGLAB_X86
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
#else
  return false;
#endif
}

}  // namespace

bool has_f16c() {
#if RINGLAB_X86
  // F16C from CPUID's bit: clang (14) knows no "f16c" for
  // __builtin_cpu_supports; "avx" also says the OS saves the YMM registers.
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

void reduce_16bit_floats(DType dtype, ReduceOp op, std::uint16_t* acc, const std::uint16_t* in,
                         std::size_t count) {
  if (dtype == DType::BFloat16) {
#if RINGLAB_X86
    if (has_avx2()) return bfloat16_avx2(op, acc, in, count);
#endif
    return bfloat16_baseline(op, acc, in, count);
  }
#if RINGLAB_X86
  if (has_f16c()) return half_f16c(op, acc, in, count);
#endif
  half_baseline(op, acc, in, count);
}

void divide_16bit_floats(DType dtype, std::uint16_t* data, std::size_t count, int divisor) {
  const float d = static_cast<float>(divisor);
  if (dtype == DType::BFloat16) return scalar_divide<BFloat16Bits>(data, count, d);
#if RINGLAB_X86
  if (has_f16c()) return half_divide_f16c(data, count, d);
#endif
  scalar_divide<HalfBits>(data, count, d);
}

}  // namespace ringlab
