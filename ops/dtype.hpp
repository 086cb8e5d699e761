// Element types a Tensor can hold, PyTorch's names for them, and the one
// visitor (visit_dtype) that runs templated code on the C++ type behind a
// runtime DType. Every dtype is one row of RINGLAB_DTYPES below: the enum,
// the names, the sizes, dtype_of<T>() and visit_dtype all come from it, so
// adding a dtype is adding a row (and teaching the reduce loops its
// arithmetic, ops/reduce_op.cpp, and the NCCL map, transport/nccl/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "ops/half.hpp"

namespace ringlab {

// What kind of number a dtype holds; decides which reduce ops apply.
enum class DTypeKind : std::uint8_t { Bool, Unsigned, Signed, Float };

// One row per dtype, in PyTorch's order of ScalarType:
//   X(enumerator, C++ type, PyTorch's name, PyTorch's other name or "", kind)
// torch.uint8 and friends; Half and BFloat16 are ops/half.hpp's 16-bit
// floats, which convert to and from float rounding to nearest even, as
// c10::Half and c10::BFloat16 do.
#define RINGLAB_DTYPES(X)                                \
  X(Bool, bool, "bool", "", Bool)                        \
  X(UInt8, std::uint8_t, "uint8", "", Unsigned)          \
  X(Int8, std::int8_t, "int8", "", Signed)               \
  X(Int16, std::int16_t, "int16", "short", Signed)       \
  X(Int32, std::int32_t, "int32", "int", Signed)         \
  X(Int64, std::int64_t, "int64", "long", Signed)        \
  X(Float16, ::ringlab::Half, "float16", "half", Float)  \
  X(BFloat16, ::ringlab::BFloat16, "bfloat16", "", Float) \
  X(Float32, float, "float32", "float", Float)           \
  X(Float64, double, "float64", "double", Float)

enum class DType : std::uint8_t {
#define RINGLAB_DTYPE_ENUM(e, T, name, alias, kind) e,
  RINGLAB_DTYPES(RINGLAB_DTYPE_ENUM)
#undef RINGLAB_DTYPE_ENUM
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;   // "float16": torch.float16
  std::string_view alias;  // "half": torch.half ("" when torch has none)
  std::size_t size;        // bytes per element
  DTypeKind kind;
};

inline constexpr DTypeInfo kDTypeInfo[] = {
#define RINGLAB_DTYPE_INFO(e, T, name, alias, kind) \
  {DType::e, name, alias, sizeof(T), DTypeKind::kind},
    RINGLAB_DTYPES(RINGLAB_DTYPE_INFO)
#undef RINGLAB_DTYPE_INFO
};

inline constexpr DType kAllDTypes[] = {
#define RINGLAB_DTYPE_LIST(e, T, name, alias, kind) DType::e,
    RINGLAB_DTYPES(RINGLAB_DTYPE_LIST)
#undef RINGLAB_DTYPE_LIST
};

constexpr const DTypeInfo& dtype_info(DType d) { return kDTypeInfo[static_cast<std::size_t>(d)]; }
constexpr std::size_t element_size(DType d) { return dtype_info(d).size; }
constexpr DTypeKind dtype_kind(DType d) { return dtype_info(d).kind; }
constexpr bool is_floating(DType d) { return dtype_kind(d) == DTypeKind::Float; }
// Integers, bool excluded (bool is its own kind, as in PyTorch).
constexpr bool is_integer(DType d) {
  return dtype_kind(d) == DTypeKind::Signed || dtype_kind(d) == DTypeKind::Unsigned;
}
// PyTorch's spelling: torch.int32, torch.bfloat16, ...
constexpr std::string_view dtype_name(DType d) { return dtype_info(d).name; }

// "torch.int64", as PyTorch prints a dtype.
inline std::string torch_dtype(DType d) { return "torch." + std::string(dtype_name(d)); }

// Accepts PyTorch's names and its aliases (int, long, half, ...), with or
// without "torch.".
DType parse_dtype(std::string_view name);
// "bool, uint8, int8, int16 (short), ...": for help texts and errors.
std::string dtype_choices();

template <typename T> struct DTypeOf;  // only the rows' types have one
#define RINGLAB_DTYPE_OF(e, T, name, alias, kind) \
  template <> struct DTypeOf<T> { static constexpr DType value = DType::e; };
RINGLAB_DTYPES(RINGLAB_DTYPE_OF)
#undef RINGLAB_DTYPE_OF
template <typename T> constexpr DType dtype_of() { return DTypeOf<T>::value; }

// The C++ types: the floating ones (Half and BFloat16 included) and the
// integer ones (bool excluded), for `if constexpr` in visited code.
template <typename T>
inline constexpr bool is_floating_type_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_integer_type_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// An integral value v (|v| < 2^63) as a T holds it, the way torch's .to()
// of an int64 tensor converts: integers wrap modulo 2^bits, bool is v != 0,
// floats round to nearest. For closed forms that may pass a narrow type's
// range (a sum over many ranks in int8).
template <typename T> T wrapped(double v) {
  if constexpr (is_integer_type_v<T>) return static_cast<T>(static_cast<std::int64_t>(v));
  else return static_cast<T>(v);
}

// Element i of memory that holds T's: a copy, so that any alignment is
// fine, and a bool byte other than 0 or 1 (from the network, say) reads as
// true instead of being undefined behaviour.
template <typename T> T load_element(const std::byte* base, std::size_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return base[i] != std::byte{0};
  } else {
    T value;
    std::memcpy(&value, base + i * sizeof(T), sizeof(T));
    return value;
  }
}

// Calls fn.template operator()<T>() with T the C++ type of d; returns its result.
template <typename Fn> decltype(auto) visit_dtype(DType d, Fn&& fn) {
  switch (d) {
#define RINGLAB_DTYPE_CASE(e, T, name, alias, kind) \
  case DType::e: return fn.template operator()<T>();
    RINGLAB_DTYPES(RINGLAB_DTYPE_CASE)
#undef RINGLAB_DTYPE_CASE
  }
  throw std::invalid_argument("unknown dtype " + std::to_string(static_cast<int>(d)));
}

}  // namespace ringlab
