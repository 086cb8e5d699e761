// Element types a Tensor can hold, and a helper to run templated code on the
// concrete C++ type behind a runtime DType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ringlab {

enum class DType : std::uint8_t { Int32, Int64, Float32, Float64 };

inline constexpr DType kAllDTypes[] = {DType::Int32, DType::Int64, DType::Float32, DType::Float64};

constexpr std::size_t element_size(DType d) {
  switch (d) {
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Float32: return 4;
    case DType::Float64: return 8;
  }
  return 0;
}

constexpr bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }

// PyTorch's spelling: torch.int32, torch.int64, torch.float32, torch.float64.
constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

// "torch.int64", as PyTorch prints a dtype.
inline std::string torch_dtype(DType d) { return "torch." + std::string(dtype_name(d)); }

// Accepts PyTorch's names and the usual aliases (int, long, float, double).
DType parse_dtype(std::string_view name);

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<std::int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

// Calls fn.template operator()<T>() with T the C++ type of d; returns its result.
template <typename Fn> decltype(auto) visit_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::Int32: return fn.template operator()<std::int32_t>();
    case DType::Int64: return fn.template operator()<std::int64_t>();
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
  }
  throw std::invalid_argument("unknown dtype");
}

}  // namespace ringlab
