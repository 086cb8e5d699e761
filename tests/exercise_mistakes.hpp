// Typical wrong solutions of the exercises, each the kind of mistake a
// learner makes first, for the tests of `check`'s diagnoses
// (test_exercises.cpp), and wrong solutions that try the checker itself:
// ending the program, never returning, leaving processes behind, taking
// memory without bound. The exercise_mistakes program runs any of them as an
// exercise's program runs (`exercise_mistakes NAME check ...`).
#pragma once

#include <span>
#include <string_view>

#include "exercises/harness.hpp"
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
// Every rank receives from the left, then sends to the right: the right
// peers and steps, and a deadlock everywhere.
void ring_all_reduce_receive_first(Comm& comm, Elems buf, ReduceOp op);
// The reduce-scatter loop without ++s: the same step, forever.
void ring_all_reduce_forgets_increment(Comm& comm, Elems buf, ReduceOp op);
// Its own reduction loop over the bytes as int64 words: right for int64 only.
void ring_all_reduce_int64_only(Comm& comm, Elems buf, ReduceOp op);
// Its own reduction loop for the four dtypes ringlab had first (int32,
// int64, float32, float64), anything else as int64 words: right for those
// four only (a checker of those four alone passed it).
void ring_all_reduce_four_dtypes(Comm& comm, Elems buf, ReduceOp op);
// Receives from the right neighbour, which sends to its own right: the wrong peer.
void ring_all_gather_wrong_peer(Comm& comm, Elems buf, std::span<const Chunk> blocks);
// Reduces with SUM whatever op was asked for.
void recursive_doubling_always_sum(Comm& comm, Elems buf, ReduceOp op);
// Runs only the first round.
void dissemination_barrier_one_round(Comm& comm);
// Sums the buckets but never divides.
void ddp_bucket_average_no_divide(Comm& comm, Elems grads, std::span<const Chunk> buckets);

// A ring_all_reduce that is named by what it does to the program, for
// exercise_mistakes (and the current folder, where some leave a pid file):
struct NamedMistake {
  std::string_view name;
  std::string_view exercise;
  exercises::Function fn;
  std::string_view does;
};
// exit_zero, underscore_exit, atexit_zero, prints_passed: end the program
//   with status 0 at the first case of 2 ranks (after printing FAILED, for
//   atexit_zero: its handler turns the status 1 into 0);
// never_returns, never_returns_on_inproc: spin at the first case of 2 ranks
//   (writing hang.pid), in every stage or on inproc only;
// setsid_child: leaves a detached process (orphan.pid) and is right;
// reserves_10_gib: reserves 10 GiB of address space and is right;
// and every function above, by its name.
std::span<const NamedMistake> all_mistakes();
const NamedMistake& find_mistake(std::string_view name);

}  // namespace ringlab::testing::mistakes
