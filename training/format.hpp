// How the training lessons print numbers.
#pragma once

#include <string>

#include "ops/tensor.hpp"
#include "training/float_tensor.hpp"

namespace ringlab::training {

// Python's repr of a float: "14.0", "0.9402943253517151", "1e-05", "inf".
// A float32 value goes through double first, as tensor.item() does.
std::string python_float(double value);

// printf's %.<digits>g: "0.0848613381" for digits = 9.
std::string significant(double value, int digits = 9);

// The first n values of t, flattened, as a 1-D float32 Tensor: prints like
// PyTorch's t.flatten()[:n] (tensor([ 0.1234, -0.0567])).
Tensor first_values(const FloatTensor& t, std::size_t n);

}  // namespace ringlab::training
