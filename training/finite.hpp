// Training that has diverged: a loss or a weight that became NaN or
// infinite (a learning rate too large, say). Once one has, every later step
// and every checkpoint would hold it, so the training loops check after each
// optimizer step and stop with an error that says where:
//
//   optimizer.step();
//   check_step({.rank = rank, .step = "epoch " + std::to_string(epoch), .lr = lr}, loss,
//              model.named_parameters());
//   save_checkpoint(...);   // reached only with finite weights
//
// Under DDP and Horovod the weights after a step are the same on every rank
// (the gradients were averaged), so every rank stops at the same step.
// save_checkpoint refuses non-finite values as well (checkpoint.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "training/module.hpp"

namespace ringlab::training {

class DivergedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a step ran, for the error.
struct StepPlace {
  int rank = 0;
  std::string step;  // "epoch 3", "step 2"
  double lr = 0;     // the learning rate it ran with
};

// "nan", "inf", "-inf", or the number with 9 significant digits, as a
// checkpoint would hold it: for messages about numbers.
std::string number_text(double v);

// The index of the first element of `values` that is NaN or infinite.
std::optional<std::size_t> first_non_finite(std::span<const float> values);

// Throws DivergedError when `loss` or an element of a parameter is NaN or
// infinite: "rank 1, epoch 3: training diverged: element 0 of net1.weight is
// nan after the step (and 3 other parameters are not finite; the loss was
// inf, lr 1000): training stops here and saves nothing, so the last
// checkpoint stays as it was; train again with a smaller learning rate".
void check_step(const StepPlace& where, float loss, const std::vector<NamedParameter>& params);

}  // namespace ringlab::training
