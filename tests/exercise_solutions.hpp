// The reference solutions (exercises/solutions/*.cpp, compiled into the test
// programs as they are), by exercise name.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "exercises/harness.hpp"
#include "exercises/task.hpp"

namespace ringlab::testing {

inline exercises::Function solution_function(std::string_view name) {
  if (name == "ping_pong") return &ping_pong;
  if (name == "binomial_broadcast") return &binomial_broadcast;
  if (name == "ring_reduce_scatter") return &ring_reduce_scatter;
  if (name == "ring_all_reduce") return &ring_all_reduce;
  if (name == "recursive_doubling") return &recursive_doubling;
  if (name == "ring_all_gather") return &ring_all_gather;
  if (name == "pairwise_all_to_all") return &pairwise_all_to_all;
  if (name == "dissemination_barrier") return &dissemination_barrier;
  if (name == "gloo_ring_reduce") return &gloo_ring_reduce;
  if (name == "recursive_halving_reduce_scatter") return &recursive_halving_reduce_scatter;
  if (name == "rabenseifner_all_reduce") return &rabenseifner_all_reduce;
  if (name == "binary_tree_all_reduce") return &binary_tree_all_reduce;
  if (name == "ddp_bucket_average") return &ddp_bucket_average;
  throw std::invalid_argument("no solution for '" + std::string(name) + "'");
}

}  // namespace ringlab::testing
