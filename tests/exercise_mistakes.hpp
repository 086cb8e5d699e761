// Typical wrong solutions of the exercises, each the kind of mistake a
// learner makes first, for the tests of `check`'s diagnoses
// (test_exercises.cpp).
#pragma once

#include <span>

#include "primitives/comm.hpp"

namespace ringlab::testing::mistakes {

// Reduce-scatter pass: sends chunk r-s and reduces chunk r-s-1 (each one
// index off, consistently on both sides): rank r ends with chunk r+1, and the
// all-gather spreads the wrong chunks.
void ring_all_reduce_wrong_chunk(Comm& comm, Elems buf, ReduceOp op);
// Receives what arrives straight into its chunk: the reduction is forgotten.
void ring_all_reduce_no_reduce(Comm& comm, Elems buf, ReduceOp op);
// Every rank sends (blocking) to the right, then receives from the left:
// fine where sends are buffered, a hang under NCCL's rules.
void ring_all_reduce_blocking_sends(Comm& comm, Elems buf, ReduceOp op);
// Receives from the right neighbour, which sends to its own right: the wrong peer.
void ring_all_gather_wrong_peer(Comm& comm, Elems buf, std::span<const Chunk> blocks);
// Reduces with SUM whatever op was asked for.
void recursive_doubling_always_sum(Comm& comm, Elems buf, ReduceOp op);
// Runs only the first round.
void dissemination_barrier_one_round(Comm& comm);
// Sums the buckets but never divides.
void ddp_bucket_average_no_divide(Comm& comm, Elems grads, std::span<const Chunk> buckets);

}  // namespace ringlab::testing::mistakes
