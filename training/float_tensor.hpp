// FloatTensor: the training library's value type. float32, one or two
// dimensions, row-major, owned storage: a Linear layer's weight is
// [out_features, in_features], its bias [out_features], a batch [batch, features].
//
// ringlab's ops/Tensor is 1-D and made for the collectives; a FloatTensor
// crosses to it (flat, same bytes) whenever it goes over the wire:
//
//   Tensor wire = weight.to_tensor();     // flat float32, numel() elements
//   pg.broadcast(wire, 0);
//   weight.copy_from(wire);               // back into [10, 10]
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ops/tensor.hpp"

namespace ringlab::training {

class FloatTensor {
 public:
  FloatTensor() = default;  // shape [0]
  // Zero-filled. Every dimension must be >= 0; one or two dimensions.
  explicit FloatTensor(std::vector<std::int64_t> shape);
  static FloatTensor matrix(std::int64_t rows, std::int64_t cols) {
    return FloatTensor({rows, cols});
  }
  static FloatTensor vector(std::int64_t n) { return FloatTensor({n}); }

  const std::vector<std::int64_t>& shape() const { return shape_; }
  int dim() const { return static_cast<int>(shape_.size()); }
  std::int64_t rows() const { return shape_[0]; }
  std::int64_t cols() const { return dim() == 2 ? shape_[1] : 1; }
  std::size_t numel() const { return data_.size(); }
  std::size_t nbytes() const { return data_.size() * sizeof(float); }

  std::span<float> values() { return data_; }
  std::span<const float> values() const { return data_; }
  float& operator[](std::size_t i) { return data_[i]; }
  float operator[](std::size_t i) const { return data_[i]; }
  // Element (i, j) of a 2-D tensor.
  float& at(std::int64_t i, std::int64_t j) {
    return data_[static_cast<std::size_t>(i * cols() + j)];
  }
  float at(std::int64_t i, std::int64_t j) const {
    return data_[static_cast<std::size_t>(i * cols() + j)];
  }

  void fill(float value);
  bool same_shape(const FloatTensor& other) const { return shape_ == other.shape_; }
  // "[10, 10]", as PyTorch's torch.Size prints without its name.
  std::string shape_string() const;

  // The flat float32 ringlab::Tensor holding the same values, for collectives.
  Tensor to_tensor() const;
  // Copies a flat float32 tensor of numel() elements back in; throws naming
  // both sizes otherwise.
  void copy_from(const Tensor& flat);

 private:
  std::vector<std::int64_t> shape_{0};
  std::vector<float> data_;
};

// "[10, 10]" for any shape vector.
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace ringlab::training
