// Tensor: a dtype, a shape (0-D or 1-D) and contiguous owned storage. It
// prints exactly like PyTorch's default printing (torch._tensor_str) for these
// cases, so a lesson's output can be compared with the articles' printouts.
//
// A view (Tensor::view) holds no storage of its own: it works on memory
// somebody else owns, as the Python package hands a torch tensor's memory
// to a ProcessGroup so that the collectives run in place on it. Copying a
// view makes a Tensor with storage of its own (like torch's clone()); moving
// one keeps the view.
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
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  // A 1-D view of `numel` elements of dtype at `data`, which must stay valid
  // (and aligned for dtype) for as long as the view is used.
  static Tensor view(DType dtype, std::int64_t numel, std::byte* data);
  bool is_view() const { return view_ != nullptr; }

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
  std::size_t nbytes() const { return view_ ? view_bytes_ : storage_.size(); }

  std::span<std::byte> bytes() { return {base(), nbytes()}; }
  std::span<const std::byte> bytes() const { return {base(), nbytes()}; }
  // Typed access; throws if T does not match dtype().
  template <typename T> std::span<T> data() {
    check_type(dtype_of<T>());
    return {reinterpret_cast<T*>(base()), numel()};
  }
  template <typename T> std::span<const T> data() const {
    check_type(dtype_of<T>());
    return {reinterpret_cast<const T*>(base()), numel()};
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
  std::byte* base() { return view_ ? view_ : storage_.data(); }
  const std::byte* base() const { return view_ ? view_ : storage_.data(); }

  DType dtype_ = DType::Int64;
  std::vector<std::int64_t> shape_{0};
  std::vector<std::byte> storage_;
  std::byte* view_ = nullptr;  // a view's memory (storage_ is then empty)
  std::size_t view_bytes_ = 0;
};

// Python's repr of a list of tensors: [tensor([1, 2]), tensor([3, 4])]
std::string to_string(const std::vector<Tensor>& tensors);

}  // namespace ringlab
