// Tensor: a dtype, a shape (0-D or 1-D) and contiguous owned storage. It
// prints exactly like PyTorch's default printing (torch._tensor_str) for these
// cases, so a lesson's output can be compared with the articles' printouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "ops/dtype.hpp"

namespace ringlab {

class Tensor {
 public:
  Tensor() = default;  // 1-D, int64, zero elements
  Tensor(DType dtype, std::vector<std::int64_t> shape);  // zero-filled

  static Tensor zeros(std::int64_t n, DType dtype = DType::Float32);
  static Tensor scalar(double value, DType dtype = DType::Float32);  // 0-D
  // torch.arange(n, dtype=...): 0, 1, ..., n-1
  static Tensor arange(std::int64_t n, DType dtype = DType::Int64);
  // torch.tensor([..]) with the dtype PyTorch infers: int64 for integers.
  static Tensor of(std::initializer_list<std::int64_t> values);
  static Tensor of(std::initializer_list<int> values);  // so of({1, 2}) is int64 too
  static Tensor of(std::initializer_list<double> values, DType dtype = DType::Float32);
  template <typename T> static Tensor from(std::span<const T> values) {
    Tensor t(dtype_of<T>(), {static_cast<std::int64_t>(values.size())});
    auto out = t.data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  int dim() const { return static_cast<int>(shape_.size()); }
  std::size_t numel() const;
  std::size_t nbytes() const { return storage_.size(); }

  std::span<std::byte> bytes() { return storage_; }
  std::span<const std::byte> bytes() const { return storage_; }
  // Typed access; throws if T does not match dtype().
  template <typename T> std::span<T> data() {
    check_type(dtype_of<T>());
    return {reinterpret_cast<T*>(storage_.data()), numel()};
  }
  template <typename T> std::span<const T> data() const {
    check_type(dtype_of<T>());
    return {reinterpret_cast<const T*>(storage_.data()), numel()};
  }

  // Element i converted to double (for printing and tests).
  double item_as_double(std::size_t i = 0) const;
  void set_from_double(std::size_t i, double v);

  // In-place arithmetic with a scalar, as the lessons do (`tensor += 1`).
  Tensor& operator+=(double v);
  Tensor operator+(double v) const;
  Tensor operator*(double v) const;
  // t[i] as a 0-D tensor (PyTorch's tensor[0]).
  Tensor operator[](std::int64_t i) const;

  bool same_values(const Tensor& other) const;  // dtype, shape and bytes equal

  // PyTorch's repr: tensor([1, 2]), tensor(1.), tensor([0.5000, 1.2500]) ...
  std::string to_string() const;

 private:
  void check_type(DType requested) const;

  DType dtype_ = DType::Int64;
  std::vector<std::int64_t> shape_{0};
  std::vector<std::byte> storage_;
};

// Python's repr of a list of tensors: [tensor([1, 2]), tensor([3, 4])]
std::string to_string(const std::vector<Tensor>& tensors);

}  // namespace ringlab
