// What the training lessons share: lines that start with "Rank r" (so the
// canonical form of lessons/canonical.hpp sorts them by rank) and the
// printing of parameters.
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.hpp"
#include "training/format.hpp"
#include "training/module.hpp"

namespace ringlab::lessons {

inline std::string rank_prefix(int rank) { return "Rank " + std::to_string(rank) + " "; }

// "Rank 0 before step module.net1.weight tensor([ 0.1, ...])": each parameter's
// first four values, flattened, as PyTorch prints a tensor.
inline void print_parameters(int rank, const std::string& when,
                             const std::vector<training::NamedParameter>& params) {
  for (const training::NamedParameter& p : params)
    print(rank_prefix(rank) + when + " " + p.name + " " +
          training::first_values(p.parameter->value, 4).to_string());
}

}  // namespace ringlab::lessons
