// The cases an exercise is checked on, and the closed form of what every rank
// must hold after each: world sizes 1 to 9; 0, 1, 7 (odd, and fewer than
// most worlds' ranks, so some chunks are empty) and 100,003 elements; roots
// at the start, the end and the middle of the world.
//
// A world's cases, in order: first the articles' (int64, SUM), whose inputs
// are theirs, rank r's element i is 1 + 2r + i (its own block, for
// all_gather; element d*n + i of its send buffer, for all_to_all); then
// every other dtype of kCheckedDTypes with every op that applies to it (for
// the exercises that take an op; SUM, else), 7 elements each; the
// 100,003-element case last (the backends always, the simulator with
// --large). DDP's gradients are float32 throughout.
//
// Every input and every result is what the case's dtype holds of an
// integer, so that every order of combining gives the same bits: SUM adds
// small integers (at most 135, exact in bfloat16), PRODUCT multiplies ones
// and twos (at most 2^9), MIN and MAX pick among 0 .. 10, the bitwise ops
// combine 7-bit patterns, and AVG's inputs are multiples of the world size
// whose sums stay at most 243 (the average of P * (1 + (r + i) % 3) is an
// integer, and every partial sum is exact in bfloat16). Integers wrap as
// the dtype does (a sum of 135 in int8 is -121, whatever the order). A
// bool case's inputs are (r + i) % 3 != 0 whatever the op (SUM is or,
// PRODUCT and, as ops/reduce_op.cpp says), so that every result needs the
// other ranks' inputs. Only DDP's division by P rounds.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "exercises/catalog.hpp"
#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"
#include "primitives/comm.hpp"

namespace ringlab::exercises {

inline constexpr int kMaxWorld = 9;
inline constexpr std::size_t kLargeCount = 100003;
// The dtypes every exercise with data is checked on (DDP's: float32 only):
// every dtype of ops/dtype.hpp, so a solution that assumes its elements'
// type or size (8 bytes, 4, a float) fails. The first four come first, so
// a solution right for int64 only fails in int32 first.
inline constexpr DType kCheckedDTypes[] = {
    DType::Int64, DType::Int32,   DType::Float32, DType::Float64, DType::Bool,
    DType::UInt8, DType::Int8,    DType::Int16,   DType::Float16, DType::BFloat16};
static_assert(std::size(kCheckedDTypes) == std::size(kAllDTypes), "a dtype left unchecked");

struct Case {
  int ranks = 1;
  std::size_t count = 0;  // elements per rank (per block, where there are P blocks)
  int root = 0;           // Rooted and Reduce only
  ReduceOp op = ReduceOp::SUM;
  DType dtype = DType::Int64;
};

// "4 ranks, 7 int64 elements per rank, root 2" (what applies to the shape).
std::string describe(const Exercise& exercise, const Case& c);
// What `ringlab exercise check` runs at world size `ranks`, in order (the
// 100,003-element case only with `large`).
std::vector<Case> cases_for(const Exercise& exercise, int ranks, bool large = true);
// The case the cost is measured on: 8 ranks, 1024 elements.
Case cost_case(const Exercise& exercise);
// Whether the exercise's function takes an op (and is checked with every op).
bool takes_op(const Exercise& exercise);

// Rank r's input element i in case c (the pattern of c's op), as c's dtype
// holds it.
double input_value(const Case& c, int rank, std::size_t i);
// v as `dtype` holds it (ops/dtype.hpp's wrapped), back as a double.
double held_as(DType dtype, double v);

// One of a rank's buffers, as the function receives it.
struct BufferPlan {
  const char* name;                       // the parameter's name: "buf", "send", "recv", "grads"
  std::size_t count;                      // elements
  std::size_t input_offset, input_count;  // this rank's input among them
};
// The buffers rank `rank` passes, in parameter order (none for a barrier).
std::vector<BufferPlan> buffers_of(const Exercise& exercise, const Case& c, int rank);
// The blocks (P blocks of count) or DDP's buckets, as the function receives them.
std::vector<Chunk> blocks_of(const Exercise& exercise, const Case& c);
// What element i of buffer `buffer` (an index into buffers_of) holds on
// entry, and must hold on return; checked() says which elements are checked.
double initial_value(const Exercise& exercise, const Case& c, int rank, int buffer, std::size_t i);
double expected_value(const Exercise& exercise, const Case& c, int rank, int buffer, std::size_t i);
bool checked(const Exercise& exercise, const Case& c, int rank, int buffer, std::size_t i);
// The ranks whose inputs element i must contain at the end ({root} for a
// broadcast, every rank for a reduction), as a list.
std::vector<int> expected_sources(const Exercise& exercise, const Case& c, int rank, int buffer,
                                  std::size_t i);

// Whether `held` is what the case's dtype should hold for `expected`: the
// same integer, or for DDP's float32 average the same value to a few ulps
// (dividing by P and multiplying by 1/P may round apart).
bool same_value(double held, double expected, DType dtype);

}  // namespace ringlab::exercises
