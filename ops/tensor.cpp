// Tensor storage, element access and scalar arithmetic. Printing, which
// follows PyTorch exactly, is in tensor_print.cpp.
#include "ops/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace ringlab {

// ---------------------------------------------------------------------------
// dtype names

DType parse_dtype(std::string_view name) {
  std::string_view bare = name;
  if (bare.starts_with("torch.")) bare.remove_prefix(6);
  for (const DTypeInfo& row : kDTypeInfo)
    if (!bare.empty() && (bare == row.name || bare == row.alias)) return row.dtype;
  throw std::invalid_argument("unknown dtype '" + std::string(name) + "'; valid dtypes: " +
                              dtype_choices() + ", optionally written with a 'torch.' prefix");
}

std::string dtype_choices() {
  std::string text;
  for (const DTypeInfo& row : kDTypeInfo) {
    if (!text.empty()) text += ", ";
    text += row.name;
    if (!row.alias.empty()) text += " (" + std::string(row.alias) + ")";
  }
  return text;
}

namespace {

// Converts v to the integer type T the way PyTorch stores a Python float into
// an integer tensor (truncation toward zero). Values that do not fit are
// rejected instead of invoking undefined behaviour.
template <typename T>
T checked_integer(double v) {
  const double t = std::trunc(v);
  // max + 1 is a power of two, exactly representable, so [min, max + 1) is the range.
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double past = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2;
  if (!(t >= lo && t < past)) {
    throw std::invalid_argument("value " + std::to_string(v) + " does not fit in a " +
                                torch_dtype(dtype_of<T>()) + " tensor");
  }
  return static_cast<T>(t);
}

// A double stored as T, as PyTorch stores a Python number: integers
// truncate (and must fit), bool is "not zero", the 16-bit floats round
// through float (c10::Half(float)).
template <typename T>
T from_double(double v) {
  if constexpr (is_integer_type_v<T>) {
    return checked_integer<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return static_cast<T>(v);
  }
}

// Integer arithmetic wraps around on overflow like PyTorch's; going through an
// unsigned type at least as wide as unsigned int keeps that well defined in
// C++ (int16 * int16 in uint16_t would be promoted to int, and overflow).
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
T wrapping_add(T a, T b) {
  using U = WrapType<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrapping_mul(T a, T b) {
  using U = WrapType<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

// Our API takes every scalar as a double, so "an int scalar" (which keeps an
// integer tensor's dtype in PyTorch) is taken to mean "an integral value".
bool is_integral_value(double v) { return std::isfinite(v) && std::trunc(v) == v; }

enum class ScalarOp { Add, Mul };

// A copy of t with its elements converted to dtype, as .to() converts: a
// value goes through double, except into the 16-bit floats, which PyTorch
// rounds from float.
Tensor converted(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out(dtype, t.shape());
  visit_dtype(t.dtype(), [&]<typename From>() {
    visit_dtype(dtype, [&]<typename To>() {
      const std::byte* src = t.bytes().data();
      const auto dst = out.data<To>();
      for (std::size_t i = 0; i < dst.size(); ++i)
        dst[i] = static_cast<To>(static_cast<double>(load_element<From>(src, i)));
    });
  });
  return out;
}

// The dtype of t OP v, by PyTorch's type promotion: a float tensor keeps its
// dtype; an integer tensor keeps it for an integral scalar and becomes the
// default float dtype (float32) for another (torch.tensor([1, 2]) * 1.5); a
// bool tensor becomes int64 or float32.
DType result_dtype(DType dtype, double v) {
  if (is_floating(dtype)) return dtype;
  if (!is_integral_value(v)) return DType::Float32;
  return dtype == DType::Bool ? DType::Int64 : dtype;
}

// t OP v, computed in the result type like PyTorch's CPU kernels: integers
// wrap; floats compute in their own type, and the 16-bit ones in float,
// rounded back to nearest even (PyTorch's opmath).
Tensor apply_scalar(const Tensor& t, double v, ScalarOp op) {
  Tensor out = converted(t, result_dtype(t.dtype(), v));
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (is_integer_type_v<T>) {
      const T s = from_double<T>(v);
      for (T& x : out.data<T>()) x = op == ScalarOp::Add ? wrapping_add(x, s) : wrapping_mul(x, s);
    } else if constexpr (std::is_floating_point_v<T>) {
      const T s = static_cast<T>(v);
      for (T& x : out.data<T>()) x = op == ScalarOp::Add ? x + s : x * s;
    } else if constexpr (is_floating_type_v<T>) {
      const float s = static_cast<float>(v);
      for (T& x : out.data<T>()) {
        const float f = static_cast<float>(x);
        x = T(op == ScalarOp::Add ? f + s : f * s);
      }
    }
    // bool: never a result type (result_dtype promotes it).
  });
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Construction

Tensor::Tensor(DType dtype, std::vector<std::int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  if (shape_.size() > 1) {
    throw std::invalid_argument("Tensor supports 0-D and 1-D shapes only, got " +
                                std::to_string(shape_.size()) + " dimensions");
  }
  for (std::int64_t size : shape_) {
    if (size < 0) {
      throw std::invalid_argument("Tensor size must be non-negative, got " + std::to_string(size));
    }
  }
  storage_.assign(numel() * element_size(dtype_), std::byte{0});
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      storage_(other.bytes().begin(), other.bytes().end()) {}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this == &other) return *this;
  std::vector<std::byte> copied(other.bytes().begin(), other.bytes().end());
  dtype_ = other.dtype_;
  shape_ = other.shape_;
  storage_ = std::move(copied);
  view_ = nullptr;
  view_bytes_ = 0;
  return *this;
}

Tensor Tensor::view(DType dtype, std::int64_t numel, std::byte* data) {
  if (numel < 0)
    throw std::invalid_argument("Tensor size must be non-negative, got " + std::to_string(numel));
  if (numel > 0 && data == nullptr)
    throw std::invalid_argument("a view of " + std::to_string(numel) + " elements needs memory");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = {numel};
  t.view_bytes_ = static_cast<std::size_t>(numel) * element_size(dtype);
  // An empty view still needs a non-null base, so is_view() says what it is.
  static std::byte nothing{};
  t.view_ = data ? data : &nothing;
  return t;
}

Tensor Tensor::zeros(std::int64_t n, DType dtype) { return Tensor(dtype, {n}); }

Tensor Tensor::scalar(double value, DType dtype) {
  Tensor t(dtype, {});
  t.set_from_double(0, value);
  return t;
}

Tensor Tensor::arange(std::int64_t n, DType dtype) {
  Tensor t(dtype, {n});
  for (std::size_t i = 0; i < t.numel(); ++i) t.set_from_double(i, static_cast<double>(i));
  return t;
}

Tensor Tensor::of(std::initializer_list<std::int64_t> values) {
  return from(std::span<const std::int64_t>(values.begin(), values.size()));
}

Tensor Tensor::of(std::initializer_list<int> values) {
  Tensor t(DType::Int64, {static_cast<std::int64_t>(values.size())});
  std::size_t i = 0;
  for (int v : values) t.data<std::int64_t>()[i++] = v;
  return t;
}

Tensor Tensor::of(std::initializer_list<double> values, DType dtype) {
  Tensor t(dtype, {static_cast<std::int64_t>(values.size())});
  std::size_t i = 0;
  for (double v : values) t.set_from_double(i++, v);
  return t;
}

// ---------------------------------------------------------------------------
// Element access

std::size_t Tensor::numel() const {
  std::size_t n = 1;  // a 0-D tensor holds one element
  for (std::int64_t size : shape_) n *= static_cast<std::size_t>(size);
  return n;
}

void Tensor::check_type(DType requested) const {
  if (requested != dtype_) {
    throw std::invalid_argument("Tensor::data<" + std::string(dtype_name(requested)) +
                                ">() called on a tensor of dtype " + torch_dtype(dtype_));
  }
}

namespace {
void check_element_index(std::size_t i, std::size_t numel) {
  if (i >= numel) {
    throw std::out_of_range("element index " + std::to_string(i) +
                            " is out of range for a tensor with " + std::to_string(numel) +
                            " elements");
  }
}
}  // namespace

double Tensor::item_as_double(std::size_t i) const {
  check_element_index(i, numel());
  return visit_dtype(dtype_, [&]<typename T>() {
    return static_cast<double>(load_element<T>(base(), i));
  });
}

void Tensor::set_from_double(std::size_t i, double v) {
  check_element_index(i, numel());
  visit_dtype(dtype_, [&]<typename T>() { data<T>()[i] = from_double<T>(v); });
}

Tensor Tensor::operator[](std::int64_t i) const {
  if (dim() == 0) {
    throw std::invalid_argument("invalid index of a 0-dim tensor; use item_as_double() instead");
  }
  const std::int64_t size = shape_[0];
  if (i < -size || i >= size) {
    throw std::out_of_range("index " + std::to_string(i) +
                            " is out of bounds for dimension 0 with size " + std::to_string(size));
  }
  const std::size_t index = static_cast<std::size_t>(i < 0 ? i + size : i);  // Python's t[-1]
  Tensor element(dtype_, {});
  const std::size_t esize = element_size(dtype_);
  std::copy_n(base() + index * esize, esize, element.storage_.begin());
  return element;
}

bool Tensor::same_values(const Tensor& other) const {
  const auto mine = bytes(), theirs = other.bytes();
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end());
}

// ---------------------------------------------------------------------------
// Arithmetic

Tensor& Tensor::operator+=(double v) {
  // In place the dtype cannot change, so PyTorch refuses what would promote.
  const DType result = result_dtype(dtype_, v);
  if (result != dtype_) {
    throw std::invalid_argument("result type " + torch_dtype(result) +
                                " can't be cast to the desired output type " + torch_dtype(dtype_) +
                                " (adding " + std::to_string(v) + " in place to a " +
                                torch_dtype(dtype_) + " tensor)");
  }
  // Written into this tensor's own bytes, so that a view changes the memory
  // it views.
  const Tensor sum = apply_scalar(*this, v, ScalarOp::Add);
  std::copy(sum.bytes().begin(), sum.bytes().end(), bytes().begin());
  return *this;
}

Tensor Tensor::operator+(double v) const { return apply_scalar(*this, v, ScalarOp::Add); }

Tensor Tensor::operator*(double v) const { return apply_scalar(*this, v, ScalarOp::Mul); }

}  // namespace ringlab
