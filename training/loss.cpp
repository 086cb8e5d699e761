#include "training/loss.hpp"

#include <stdexcept>

namespace ringlab::training {

float MSELoss::forward(const FloatTensor& prediction, const FloatTensor& target) {
  if (!prediction.same_shape(target))
    throw std::invalid_argument("MSELoss: the prediction has shape " + prediction.shape_string() +
                                " and the target " + target.shape_string() +
                                "; they must be the same");
  difference_ = prediction;
  // The sum of squares is accumulated in double and the result stored as
  // float32, as PyTorch's CPU reduction of a float tensor does.
  double sum = 0.0;
  for (std::size_t i = 0; i < difference_.numel(); ++i) {
    difference_[i] = prediction[i] - target[i];
    sum += static_cast<double>(difference_[i]) * static_cast<double>(difference_[i]);
  }
  has_forward_ = true;
  if (reduction_ == Reduction::Sum) return static_cast<float>(sum);
  return difference_.numel() ? static_cast<float>(sum / static_cast<double>(difference_.numel()))
                             : 0.0f;
}

FloatTensor MSELoss::backward() const {
  if (!has_forward_) throw std::logic_error("MSELoss: backward before forward");
  FloatTensor grad = difference_;
  const float scale =
      reduction_ == Reduction::Sum ? 2.0f : 2.0f / static_cast<float>(difference_.numel());
  for (float& g : grad.values()) g *= scale;
  return grad;
}

}  // namespace ringlab::training
