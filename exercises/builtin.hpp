// ringlab's own versions of the two exercises that no collective of
// primitives/ is (the other seven are the algorithms of primitives/ as they
// are): what `check` compares a learner's cost with.
#pragma once

#include <span>

#include "primitives/comm.hpp"

namespace ringlab::exercises {

// The pingpong lesson's exchange on Comm: 0 -> 1 (step 0), 1 adds, 1 -> 0 (step 1).
void builtin_ping_pong(Comm& comm, Elems buf);
// What DDP does with its buckets: each, in order, all_reduce ring with SUM,
// then divided by the world size.
void builtin_ddp_bucket_average(Comm& comm, Elems grads, std::span<const Chunk> buckets);

}  // namespace ringlab::exercises
