#include "training/torch_random.hpp"

#include <bit>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace ringlab::training {

namespace {

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }
std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }

// ln(x) for x > 0, as avx_mathfun.h's log256_ps computes it (Cephes' logf:
// the exponent split off, a polynomial on the mantissa), whose operations
// PyTorch's AVX2 build runs with fused multiply-adds where written so here.
float cephes_log(float x) {
  const std::uint32_t b = bits_of(x);
  float e = static_cast<float>(static_cast<int>(b >> 23) - 0x7f) + 1.0f;
  x = from_bits((b & 0x807FFFFFu) | bits_of(0.5f));  // the mantissa, in [0.5, 1)
  if (x < 0.707106781186547524f) {
    e -= 1.0f;
    x = (x - 1.0f) + x;
  } else {
    x = x - 1.0f;
  }
  const float z = x * x;
  float y = 7.0376836292E-2f;
  for (float p : {-1.1514610310E-1f, 1.1676998740E-1f, -1.2420140846E-1f, 1.4249322787E-1f,
                  -1.6668057665E-1f, 2.0000714765E-1f, -2.4999993993E-1f, 3.3333331174E-1f})
    y = std::fma(y, x, p);
  y = y * x * z;
  y = std::fma(e, -2.12194440e-4f, y);
  y = y - z * 0.5f;
  x = x + y;
  return std::fma(e, 0.693359375f, x);
}

// sin and cos of x, as avx_mathfun.h's sincos256_ps (Cephes' sinf/cosf:
// reduced by multiples of pi/4, then one of two polynomials).
void cephes_sincos(float x, float& sine, float& cosine) {
  std::uint32_t sign_sin = bits_of(x) & 0x80000000u;
  x = std::fabs(x);
  int j = static_cast<int>(x * 1.27323954473516f);  // x * 4/pi, truncated
  j = (j + 1) & ~1;
  const float y = static_cast<float>(j);
  sign_sin ^= static_cast<std::uint32_t>(j & 4) << 29;
  const std::uint32_t sign_cos = static_cast<std::uint32_t>(~(j - 2) & 4) << 29;
  const bool sine_polynomial_is_sine = (j & 2) == 0;
  x = std::fma(y, -0.78515625f, x);
  x = std::fma(y, -2.4187564849853515625e-4f, x);
  x = std::fma(y, -3.77489497744594108e-8f, x);
  const float z = x * x;
  float c = 2.443315711809948E-005f;
  c = std::fma(c, z, -1.388731625493765E-003f);
  c = std::fma(c, z, 4.166664568298827E-002f);
  c = std::fma(c * z, z, -(z * 0.5f)) + 1.0f;
  float s = -1.9515295891E-4f;
  s = std::fma(s, z, 8.3321608736E-3f);
  s = std::fma(s, z, -1.6666654611E-1f);
  s = std::fma(s * z, x, x);
  const float sin_value = sine_polynomial_is_sine ? s : c;
  const float cos_value = sine_polynomial_is_sine ? c : s;
  sine = from_bits(bits_of(sin_value) ^ sign_sin);
  cosine = from_bits(bits_of(cos_value) ^ sign_cos);
}

// normal_fill_16 (AVX2): Box-Muller on 16 uniform values in place.
void normal_fill_16(float* data) {
  const auto two_pi = static_cast<float>(2.0 * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float radius = std::sqrt(-2.0f * cephes_log(1.0f - data[j]));
    float sine, cosine;
    cephes_sincos(two_pi * data[j + 8], sine, cosine);
    data[j] = radius * cosine;
    data[j + 8] = radius * sine;
  }
}

}  // namespace

TorchGenerator::TorchGenerator(std::uint64_t seed)
    : engine_(static_cast<std::uint32_t>(seed & 0xFFFFFFFFu)) {}

float TorchGenerator::uniform(float from, float to) {
  const float x = static_cast<float>(engine_() & 0xFFFFFFu) * (1.0f / 16777216.0f);
  return std::fma(x, to - from, from);  // one rounding, as PyTorch's vectorized kernel does
}

void TorchGenerator::uniform_(FloatTensor& t, double from, double to) {
  const auto a = static_cast<float>(from), b = static_cast<float>(to);
  for (float& v : t.values()) v = uniform(a, b);
}

FloatTensor TorchGenerator::randn(std::int64_t rows, std::int64_t cols) {
  FloatTensor t = FloatTensor::matrix(rows, cols);
  const std::size_t n = t.numel();
  if (n < 16) throw std::invalid_argument("TorchGenerator::randn: fewer than 16 elements");
  float* data = t.values().data();
  for (std::size_t i = 0; i < n; ++i) data[i] = uniform(0, 1);
  for (std::size_t i = 0; i + 16 <= n; i += 16) normal_fill_16(data + i);
  if (n % 16 != 0) {
    float* last = data + n - 16;
    for (int i = 0; i < 16; ++i) last[i] = uniform(0, 1);
    normal_fill_16(last);
  }
  return t;
}

void TorchGenerator::init_linear(Linear& layer) {
  // kaiming_uniform_(weight, a=sqrt(5)): gain sqrt(2 / (1 + a^2)), bound
  // gain * sqrt(3 / fan_in), in double as Python computes it.
  const double fan_in = static_cast<double>(layer.in_features());
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1 + a * a));
  const double bound = std::sqrt(3.0) * (gain / std::sqrt(fan_in));
  uniform_(layer.weight.value, -bound, bound);
  if (layer.has_bias()) {
    const double bias_bound = 1 / std::sqrt(fan_in);
    uniform_(layer.bias.value, -bias_bound, bias_bound);
  }
}

void torch_init_toy_model(ToyModel& model, TorchGenerator& g) {
  g.init_linear(model.net1());
  g.init_linear(model.net2());
}

void torch_init_toy_model_parallel(ToyMpModel& model, TorchGenerator& g) {
  g.init_linear(model.net1());
  g.init_linear(model.net2());
}

}  // namespace ringlab::training
