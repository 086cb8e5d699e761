#include "ops/reduce_op.hpp"

#include "ops/reduce_half.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <type_traits>

namespace ringlab {

std::string_view op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "sum";
    case ReduceOp::PRODUCT: return "prod";
    case ReduceOp::MIN: return "min";
    case ReduceOp::MAX: return "max";
    case ReduceOp::AVG: return "avg";
    case ReduceOp::BAND: return "band";
    case ReduceOp::BOR: return "bor";
    case ReduceOp::BXOR: return "bxor";
  }
  return "?";
}

ReduceOp parse_op(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "product") lower = "prod";
  for (ReduceOp op : kAllReduceOps)
    if (op_name(op) == lower) return op;
  throw std::invalid_argument("unknown reduce op '" + std::string(name) +
                              "': use one of sum, prod, min, max, avg, band, bor, bxor");
}

// Which ops PyTorch's backends define for which dtypes (Gloo on the CPU,
// NCCL on the GPU): SUM, PRODUCT, MIN and MAX on every dtype (on bool they
// are or, and, and, or: NCCL's map for bool, and torch's bool arithmetic);
// AVG divides, so floating dtypes only; the bitwise ops on integers and bool.
bool op_applies(ReduceOp op, DType dtype) {
  switch (op) {
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR: return !is_floating(dtype);
    case ReduceOp::AVG: return is_floating(dtype);
    case ReduceOp::SUM:
    case ReduceOp::PRODUCT:
    case ReduceOp::MIN:
    case ReduceOp::MAX: return true;
  }
  return false;
}

namespace {
// "float16, bfloat16, float32, float64": the dtypes where pred holds.
template <typename Pred>
std::string names_where(Pred pred) {
  std::string text;
  for (const DTypeInfo& row : kDTypeInfo)
    if (pred(row.dtype)) text += (text.empty() ? "" : ", ") + std::string(row.name);
  return text;
}
}  // namespace

void check_op(ReduceOp op, DType dtype) {
  if (op_applies(op, dtype)) return;
  std::string msg = "reduce op " + std::string(op_name(op)) + " does not apply to dtype " +
                    std::string(dtype_name(dtype)) + ": ";
  if (op == ReduceOp::AVG)
    msg += "AVG divides, so it needs a floating tensor (" + names_where(is_floating) +
           "); use SUM on integers and divide, or convert the tensor to a floating dtype";
  else
    msg += "bitwise ops need an integer or bool tensor (" +
           names_where([](DType d) { return !is_floating(d); }) + ")";
  throw std::invalid_argument(msg);
}

namespace {

// Integers wrap on overflow (two's complement), as PyTorch's do; the sums
// and products are made in an unsigned type at least as wide as unsigned
// int, where wrapping is defined (int16 * int16 in uint16_t would be
// promoted to int and could overflow).
template <typename T>
using Wrap = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
void reduce_integers(ReduceOp op, T* acc, const T* in, std::size_t n) {
  using U = Wrap<T>;
  switch (op) {
    case ReduceOp::AVG:  // refused before (check_op); listed so the switch is whole
    case ReduceOp::SUM:
      for (std::size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(U(acc[i]) + U(in[i]));
      return;
    case ReduceOp::PRODUCT:
      for (std::size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(U(acc[i]) * U(in[i]));
      return;
    case ReduceOp::MIN:
      for (std::size_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], in[i]);
      return;
    case ReduceOp::MAX:
      for (std::size_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], in[i]);
      return;
    case ReduceOp::BAND:
      for (std::size_t i = 0; i < n; ++i) acc[i] &= in[i];
      return;
    case ReduceOp::BOR:
      for (std::size_t i = 0; i < n; ++i) acc[i] |= in[i];
      return;
    case ReduceOp::BXOR:
      for (std::size_t i = 0; i < n; ++i) acc[i] ^= in[i];
      return;
  }
}

// bool as bytes (a byte other than 0 or 1 counts as true, and every result
// is 0 or 1): SUM and MAX are or, PRODUCT and MIN are and, as in PyTorch.
void reduce_bools(ReduceOp op, std::uint8_t* acc, const std::uint8_t* in, std::size_t n) {
  switch (op) {
    case ReduceOp::AVG:  // refused before
    case ReduceOp::SUM:
    case ReduceOp::MAX:
    case ReduceOp::BOR:
      for (std::size_t i = 0; i < n; ++i) acc[i] = (acc[i] | in[i]) != 0;
      return;
    case ReduceOp::PRODUCT:
    case ReduceOp::MIN:
    case ReduceOp::BAND:
      for (std::size_t i = 0; i < n; ++i) acc[i] = (acc[i] != 0) & (in[i] != 0);
      return;
    case ReduceOp::BXOR:
      for (std::size_t i = 0; i < n; ++i) acc[i] = (acc[i] != 0) != (in[i] != 0);
      return;
  }
}

// float and double. MIN and MAX propagate nan whichever side holds it, as
// torch.minimum and torch.maximum do (Gloo's std::min/std::max keep or drop
// it by position); of two equal values (0.0 and -0.0) they keep acc, as
// Gloo's std::min/std::max keep their first argument. Written as selects of
// a non-short-circuit |, so that the loops vectorize.
template <typename T>
void reduce_floats(ReduceOp op, T* acc, const T* in, std::size_t n) {
  switch (op) {
    case ReduceOp::AVG:
    case ReduceOp::SUM:
      for (std::size_t i = 0; i < n; ++i) acc[i] += in[i];
      return;
    case ReduceOp::PRODUCT:
      for (std::size_t i = 0; i < n; ++i) acc[i] *= in[i];
      return;
    case ReduceOp::MIN:
      for (std::size_t i = 0; i < n; ++i)
        acc[i] = ((in[i] < acc[i]) | (in[i] != in[i])) ? in[i] : acc[i];
      return;
    case ReduceOp::MAX:
      for (std::size_t i = 0; i < n; ++i)
        acc[i] = ((acc[i] < in[i]) | (in[i] != in[i])) ? in[i] : acc[i];
      return;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR: return;  // refused before
  }
}

}  // namespace

void reduce_host(DType dtype, ReduceOp op, std::byte* acc, const std::byte* in, std::size_t count) {
  check_op(op, dtype);
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      reduce_bools(op, reinterpret_cast<std::uint8_t*>(acc),
                   reinterpret_cast<const std::uint8_t*>(in), count);
    } else if constexpr (is_integer_type_v<T>) {
      reduce_integers<T>(op, reinterpret_cast<T*>(acc), reinterpret_cast<const T*>(in), count);
    } else if constexpr (std::is_floating_point_v<T>) {
      reduce_floats<T>(op, reinterpret_cast<T*>(acc), reinterpret_cast<const T*>(in), count);
    } else {
      reduce_16bit_floats(dtype, op, reinterpret_cast<std::uint16_t*>(acc),
                          reinterpret_cast<const std::uint16_t*>(in), count);
    }
  });
}

void divide_host(DType dtype, std::byte* data, std::size_t count, int world_size) {
  check_op(ReduceOp::AVG, dtype);
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* p = reinterpret_cast<T*>(data);
      for (std::size_t i = 0; i < count; ++i) p[i] /= static_cast<T>(world_size);
    } else if constexpr (is_floating_type_v<T>) {
      divide_16bit_floats(dtype, reinterpret_cast<std::uint16_t*>(data), count, world_size);
    }
  });
}

}  // namespace ringlab
