#include "training/float_tensor.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ringlab::training {

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

FloatTensor::FloatTensor(std::vector<std::int64_t> shape) : shape_(std::move(shape)) {
  if (shape_.empty() || shape_.size() > 2)
    throw std::invalid_argument("FloatTensor: shape " + training::shape_string(shape_) + " has " +
                                std::to_string(shape_.size()) +
                                " dimensions; use one (a bias) or two (a weight, a batch)");
  std::size_t n = 1;
  for (std::int64_t d : shape_) {
    if (d < 0)
      throw std::invalid_argument("FloatTensor: shape " + training::shape_string(shape_) +
                                  " has a negative dimension");
    n *= static_cast<std::size_t>(d);
  }
  data_.assign(n, 0.0f);
}

void FloatTensor::fill(float value) { std::fill(data_.begin(), data_.end(), value); }

std::string FloatTensor::shape_string() const { return training::shape_string(shape_); }

Tensor FloatTensor::to_tensor() const {
  Tensor flat(DType::Float32, {static_cast<std::int64_t>(numel())});
  if (numel()) std::memcpy(flat.bytes().data(), data_.data(), nbytes());
  return flat;
}

void FloatTensor::copy_from(const Tensor& flat) {
  if (flat.dtype() != DType::Float32 || flat.numel() != numel())
    throw std::invalid_argument("FloatTensor::copy_from: expected " + std::to_string(numel()) +
                                " float32 values for shape " + shape_string() + ", got " +
                                std::to_string(flat.numel()) + " " +
                                std::string(dtype_name(flat.dtype())) + " values");
  if (numel()) std::memcpy(data_.data(), flat.bytes().data(), nbytes());
}

}  // namespace ringlab::training
