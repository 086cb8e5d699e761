// optim.SGD, as PyTorch 1.13 computes it, for one parameter group:
//
//   d = p.grad
//   if weight_decay != 0:  d = d + weight_decay * p
//   if momentum != 0:
//     buf = d                                   (first step: a copy)
//     buf = momentum * buf + (1 - dampening) * d   (later steps)
//     d = d + momentum * buf  if nesterov, else  d = buf
//   p = p - lr * d
//
// state_dict() is PyTorch's optimizer state: the group's settings and, per
// parameter index, its momentum buffer once a step has made one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "training/module.hpp"

namespace ringlab::training {

struct SgdOptions {
  double lr = 0.001;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// optimizer.state_dict(): {"state": {i: {"momentum_buffer": ...}}, "param_groups": [...]}.
struct OptimizerState {
  SgdOptions options;
  // Indexed like the parameters; empty where no step has made a buffer yet
  // (or momentum is 0).
  std::vector<std::optional<FloatTensor>> momentum_buffers;
};

class SGD {
 public:
  // Throws std::invalid_argument for PyTorch's invalid settings (negative lr,
  // momentum or weight decay; nesterov without momentum or with dampening).
  SGD(std::vector<Parameter*> params, SgdOptions options);

  void step();
  void zero_grad();  // set_to_none=False: every gradient to 0

  const SgdOptions& options() const { return options_; }
  void set_lr(double lr);
  const std::vector<Parameter*>& params() const { return params_; }

  OptimizerState state_dict() const;
  // Throws std::invalid_argument if the state was saved for a different
  // number of parameters or a buffer's shape differs from its parameter's.
  void load_state_dict(const OptimizerState& state);

 private:
  std::vector<Parameter*> params_;
  SgdOptions options_;
  std::vector<std::optional<FloatTensor>> momentum_buffers_;
};

}  // namespace ringlab::training
