// What the reductions of the exercises leave on each rank, in closed form,
// from the inputs alone: an op folded over a run of ranks, and the partial
// results Gloo's segmented ring reduce leaves on the ranks that are not the
// root (the article's most surprising output: rank 1 of 4 holds
// x1 + x2 + x3). Written from Gloo's segmentation rules, not from ringlab's
// algorithm, so that the checker and primitives/reduce.cpp check each other.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"

namespace ringlab::exercises {

// a op b on integers held as doubles (AVG adds; the division is the caller's).
double combine(ReduceOp op, double a, double b);

// x(q) op x(q+1) op ... over the ranks of `ranks`, in that order.
double fold(ReduceOp op, const std::vector<int>& ranks, const std::function<double(int)>& x);

// Gloo's ring reduce of n elements of `dtype` on P ranks: the ranks whose
// inputs element j holds on rank q at the end, in the order they are folded
// (every rank, for the root and the chunk's owner). `root` receives the
// owners' chunks; for AVG only the root divides (the caller does).
std::vector<int> gloo_ring_sources(std::size_t n, DType dtype, int P, int root, int q,
                                   std::size_t j);

}  // namespace ringlab::exercises
