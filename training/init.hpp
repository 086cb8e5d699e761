// Deterministic random numbers and PyTorch's default initialization of Linear.
//
// The generator is std::mt19937 (its output is fixed by the C++ standard for a
// given seed) turned into numbers by formulas written down here, so anyone
// can reproduce a lesson's model in a few lines of any language:
//   uniform()  = (mt() >> 8) * 2^-24                      in [0, 1), float32
//   normal()   = sqrt(-2 ln(1 - u1)) * cos(2 pi u2)       Box-Muller, in double,
//                                                        then rounded to float32
// These are not PyTorch's numbers (torch.manual_seed(42) draws differently),
// only the same distributions.
//
// Linear init (nn.Linear.reset_parameters: kaiming_uniform_ with a = sqrt(5),
// which comes to): weight and bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)),
// the weight first, row by row, then the bias.
#pragma once

#include <cstdint>
#include <random>

#include "training/float_tensor.hpp"
#include "training/module.hpp"

namespace ringlab::training {

class Generator {
 public:
  explicit Generator(std::uint32_t seed) : engine_(seed) {}
  float uniform();                       // [0, 1)
  float uniform(float low, float high);  // low + (high - low) * uniform()
  float normal();                        // standard normal
  void fill_uniform(FloatTensor& t, float low, float high);
  void fill_normal(FloatTensor& t);  // torch.randn

 private:
  std::mt19937 engine_;
};

// nn.Linear's default initialization from g.
void init_linear(Linear& layer, Generator& g);
// Both layers of a ToyModel, net1 then net2.
void init_toy_model(ToyModel& model, Generator& g);
// A [rows, cols] tensor of standard normal values (torch.randn(rows, cols)).
FloatTensor randn(std::int64_t rows, std::int64_t cols, Generator& g);

}  // namespace ringlab::training
