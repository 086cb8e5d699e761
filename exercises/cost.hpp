// What an exercise's algorithm costs, next to ringlab's own, on the same
// case (cost_case: 8 ranks, 1024 elements) recorded by the simulator: steps
// (message rounds on the critical path), and the messages and bytes sent by
// the busiest rank.
#pragma once

#include <string>

#include "exercises/catalog.hpp"

namespace ringlab::exercises {

struct Cost {
  unsigned steps = 0;
  std::size_t messages = 0;  // sent by the rank that sends the most
  std::size_t bytes = 0;     // sent by the rank that sends the most bytes
};

// Throws std::runtime_error when the function fails on the cost's case.
Cost measure(const Exercise& exercise, const Function& fn);

// The table `check` prints after the last stage passed: the learner's cost,
// ringlab's, and the closed form to reach.
std::string cost_report(const Exercise& exercise, const Function& fn);

}  // namespace ringlab::exercises
