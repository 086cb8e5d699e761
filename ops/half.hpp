// The two 16-bit floating types, as PyTorch stores them: Half (IEEE
// binary16, torch.float16) and BFloat16 (the top half of a float32,
// torch.bfloat16). Each is its 16 bits; arithmetic is done in float and
// rounded back, to nearest even, which is what c10::Half and c10::BFloat16
// do (for +, -, * and / in float the result is the correctly rounded 16-bit
// one: float's 24 bits are at least twice 11 plus 2).
//
// A double becomes a Half through float (static_cast<Half>(0.1) rounds twice),
// as c10::Half(float) does when PyTorch converts a double.
//
// Half <-> float uses the compiler's conversion (_Float16, GCC 12 and clang
// 15; clang 14's __fp16), which the CPU's F16C instructions do where the
// compiler is told it may use them; the reduce loops (ops/reduce_op.cpp)
// call F16C's vector form directly where the CPU has it. BFloat16 <-> float
// is bit arithmetic, the same as c10's round_to_nearest_even: no CPU here has
// a conversion instruction for it (AVX512-BF16 is rare), and the shift is exact.
//
// In CUDA code (nvcc) only the types are declared: the kernels use
// __half and __nv_bfloat16 on the same bits (transport/nccl/reduce_kernels.cu).
#pragma once

#include <cstdint>
#include <cstring>

namespace ringlab {

struct Half {
  std::uint16_t bits = 0;
  Half() = default;
  explicit Half(float value);
  explicit operator float() const;
  explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  static constexpr Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  std::uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value);
  explicit operator float() const;
  explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  static constexpr BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

// Values compare as numbers (nan unequal to itself, -0 equal to 0).
bool operator==(Half a, Half b);
bool operator==(BFloat16 a, BFloat16 b);

// c10::BFloat16's rounding: nan becomes 0x7FC0 (the sign dropped), every
// other value rounds to nearest even (infinity stays infinity; a value past
// the largest bfloat16 rounds to it or to infinity, as IEEE says).
inline std::uint16_t bfloat16_bits(float value) {
  std::uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  // A select, not an early return, so that loops of it vectorize.
  return (u & 0x7FFFFFFFu) > 0x7F800000u ? std::uint16_t{0x7FC0}
                                          : static_cast<std::uint16_t>(rounded);
}
inline float bfloat16_value(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

#if !defined(__CUDACC__)
#if defined(__FLT16_MAX__)
using NativeHalf = _Float16;  // GCC 12 and clang 15 on x86-64 and AArch64
#elif defined(__clang__)
using NativeHalf = __fp16;  // clang 14: a storage type, converted through float
#else
#error "ringlab needs a compiler with _Float16 (GCC 12 or later, clang 15 or later) or __fp16"
#endif
static_assert(sizeof(NativeHalf) == 2);

inline Half::Half(float value) {
  const NativeHalf h = static_cast<NativeHalf>(value);
  std::memcpy(&bits, &h, sizeof bits);
}
inline Half::operator float() const {
  NativeHalf h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}
inline BFloat16::BFloat16(float value) : bits(bfloat16_bits(value)) {}
inline BFloat16::operator float() const { return bfloat16_value(bits); }
inline bool operator==(Half a, Half b) { return static_cast<float>(a) == static_cast<float>(b); }
inline bool operator==(BFloat16 a, BFloat16 b) {
  return static_cast<float>(a) == static_cast<float>(b);
}
#endif

}  // namespace ringlab
