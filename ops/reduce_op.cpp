#include "ops/reduce_op.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
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

bool op_applies(ReduceOp op, DType dtype) {
  switch (op) {
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR: return !is_floating(dtype);
    case ReduceOp::AVG: return is_floating(dtype);
    default: return true;
  }
}

void check_op(ReduceOp op, DType dtype) {
  if (op_applies(op, dtype)) return;
  std::string msg = "reduce op " + std::string(op_name(op)) + " does not apply to dtype " +
                    std::string(dtype_name(dtype)) + ": ";
  if (op == ReduceOp::AVG)
    msg += "AVG divides, so it needs a floating tensor (float32/float64); use SUM on integers";
  else
    msg += "bitwise ops need an integer tensor (int32/int64)";
  throw std::invalid_argument(msg);
}

namespace {
template <typename T>
void reduce_typed(ReduceOp op, T* acc, const T* in, std::size_t n) {
  switch (op) {
    case ReduceOp::AVG:
    case ReduceOp::SUM:
      for (std::size_t i = 0; i < n; ++i) acc[i] += in[i];
      return;
    case ReduceOp::PRODUCT:
      for (std::size_t i = 0; i < n; ++i) acc[i] *= in[i];
      return;
    case ReduceOp::MIN:
      for (std::size_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], in[i]);
      return;
    case ReduceOp::MAX:
      for (std::size_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], in[i]);
      return;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      if constexpr (std::is_integral_v<T>) {
        if (op == ReduceOp::BAND)
          for (std::size_t i = 0; i < n; ++i) acc[i] &= in[i];
        else if (op == ReduceOp::BOR)
          for (std::size_t i = 0; i < n; ++i) acc[i] |= in[i];
        else
          for (std::size_t i = 0; i < n; ++i) acc[i] ^= in[i];
        return;
      }
      break;
  }
  check_op(op, dtype_of<T>());
}
}  // namespace

void reduce_host(DType dtype, ReduceOp op, std::byte* acc, const std::byte* in, std::size_t count) {
  visit_dtype(dtype, [&]<typename T>() {
    reduce_typed<T>(op, reinterpret_cast<T*>(acc), reinterpret_cast<const T*>(in), count);
  });
}

void divide_host(DType dtype, std::byte* data, std::size_t count, int world_size) {
  visit_dtype(dtype, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* p = reinterpret_cast<T*>(data);
      for (std::size_t i = 0; i < count; ++i) p[i] /= static_cast<T>(world_size);
    } else {
      check_op(ReduceOp::AVG, dtype);
    }
  });
}

}  // namespace ringlab
