// PyTorch's CPU random numbers (torch.manual_seed, nn.Linear's default
// initialization, torch.randn), so that a lesson run as an article's program
// runs draws the article's numbers. Written from PyTorch 1.13's CPU kernels
// (aten/src/ATen/core/DistributionsHelper.h, TransformationHelper.h,
// native/cpu/DistributionTemplates.h) and checked against PyTorch 1.13
// (tests/golden/make_ddp_golden.py):
//   the engine      mt19937 seeded with the seed (the standard's std::mt19937);
//   uniform_(a, b)  float32: ((r & 0xFFFFFF) * 2^-24) * (b - a) + a for each
//                   32-bit draw r, in float32, in element order;
//   randn, n >= 16  every element first drawn uniform in [0, 1), then each
//                   block of 16 turned by Box-Muller (u1 = 1 - x[j], u2 =
//                   x[j+8]; x[j] = r cos t, x[j+8] = r sin t, r = sqrt(-2 ln
//                   u1), t = 2 pi u2), and when 16 does not divide n the last
//                   16 elements drawn again and turned again;
//   nn.Linear       weight ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform_
//                   with a = sqrt(5) comes to that), then bias, the same.
// The rounding is that of PyTorch's AVX2 kernels (the build Debian ships, on
// a processor with AVX2): a fused multiply-add where they fuse, and ln, sin
// and cos computed as avx_mathfun.h computes them. The same 4000 normal
// values as torch.randn(4000) after torch.manual_seed(42), bit for bit; a
// PyTorch running its plain C++ kernel instead may differ in the last bit.
#pragma once

#include <cstdint>
#include <random>

#include "training/float_tensor.hpp"
#include "training/model_parallel.hpp"
#include "training/module.hpp"

namespace ringlab::training {

class TorchGenerator {
 public:
  explicit TorchGenerator(std::uint64_t seed);              // torch.manual_seed(seed)
  void uniform_(FloatTensor& t, double from, double to);    // t.uniform_(from, to)
  FloatTensor randn(std::int64_t rows, std::int64_t cols);  // torch.randn(rows, cols)
  void init_linear(Linear& layer);                          // nn.Linear(in, out)'s reset_parameters

 private:
  float uniform(float from, float to);
  std::mt19937 engine_;
};

// ToyModel() after torch.manual_seed(seed) had been called: net1, then net2.
void torch_init_toy_model(ToyModel& model, TorchGenerator& g);
// ToyMpModel(dev0, dev1) the same way (its layers are made in the same order).
void torch_init_toy_model_parallel(ToyMpModel& model, TorchGenerator& g);

}  // namespace ringlab::training
