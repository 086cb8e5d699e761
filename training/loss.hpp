// nn.MSELoss: the squared error between a prediction and a target, averaged
// over every element (reduction "mean", PyTorch's default) or summed ("sum",
// which is seed 002's torch.sum((y - label)**2)).
//
//   MSELoss loss_fn;
//   float loss = loss_fn.forward(outputs, labels);   // loss_fn(outputs, labels)
//   model.backward(loss_fn.backward());              // loss.backward()
#pragma once

#include "training/float_tensor.hpp"

namespace ringlab::training {

enum class Reduction { Mean, Sum };

class MSELoss {
 public:
  explicit MSELoss(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}

  // The loss; the shapes must be equal (PyTorch would broadcast with a
  // warning; here it is an error that names both shapes).
  float forward(const FloatTensor& prediction, const FloatTensor& target);
  // d loss / d prediction for the last forward: 2 (p - t) / N (mean) or 2 (p - t) (sum).
  FloatTensor backward() const;

 private:
  Reduction reduction_;
  FloatTensor difference_;  // p - t of the last forward
  bool has_forward_ = false;
};

}  // namespace ringlab::training
