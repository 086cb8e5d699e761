// ringlab's own versions of the exercises, in the exercises' signatures: what
// `check` compares a learner's cost with, and what the checker's tests run
// on every case. Two are no collective of primitives/ (ping-pong, DDP's
// buckets); the others are the algorithms of primitives/ as they are, with
// AVG finished as primitives/collectives.cpp finishes it: the algorithm
// runs with SUM, then the result is divided by P where it lies.
#pragma once

#include <span>

#include "primitives/comm.hpp"

namespace ringlab::exercises {

// The pingpong lesson's exchange on Comm: 0 -> 1 (step 0), 1 adds, 1 -> 0 (step 1).
void builtin_ping_pong(Comm& comm, Elems buf);
// What DDP does with its buckets: each, in order, all_reduce ring with SUM,
// then divided by the world size.
void builtin_ddp_bucket_average(Comm& comm, Elems grads, std::span<const Chunk> buckets);

void builtin_ring_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                                 ReduceOp op);
void builtin_halving_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks,
                                    ReduceOp op);
void builtin_ring_all_reduce(Comm& comm, Elems buf, ReduceOp op);
void builtin_recursive_doubling(Comm& comm, Elems buf, ReduceOp op);
void builtin_rabenseifner(Comm& comm, Elems buf, ReduceOp op);
void builtin_binary_tree(Comm& comm, Elems buf, ReduceOp op);
// Gloo's ring; for AVG only the root divides (the others keep partial sums).
void builtin_gloo_ring_reduce(Comm& comm, Elems buf, ReduceOp op, int root);

}  // namespace ringlab::exercises
