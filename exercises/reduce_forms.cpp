#include "exercises/reduce_forms.hpp"

#include <algorithm>
#include <cstdint>

namespace ringlab::exercises {

namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The cyclic run q, q+1, ..., c-1 (mod P): ((c-1-q) mod P) + 1 ranks.
std::vector<int> run_from(int q, int c, int P) {
  std::vector<int> ranks;
  const int length = ((c - 1 - q) % P + P) % P + 1;
  for (int k = 0; k < length; ++k) ranks.push_back((q + k) % P);
  return ranks;
}

}  // namespace

double combine(ReduceOp op, double a, double b) {
  const auto i = static_cast<std::int64_t>(a), k = static_cast<std::int64_t>(b);
  switch (op) {
    case ReduceOp::PRODUCT:
      return a * b;
    case ReduceOp::MIN:
      return std::min(a, b);
    case ReduceOp::MAX:
      return std::max(a, b);
    case ReduceOp::BAND:
      return static_cast<double>(i & k);
    case ReduceOp::BOR:
      return static_cast<double>(i | k);
    case ReduceOp::BXOR:
      return static_cast<double>(i ^ k);
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      break;
  }
  return a + b;
}

double fold(ReduceOp op, const std::vector<int>& ranks, const std::function<double(int)>& x) {
  double acc = x(ranks.front());
  for (std::size_t k = 1; k < ranks.size(); ++k) acc = combine(op, acc, x(ranks[k]));
  return acc;
}

// Gloo (gloo/reduce.cc): segments of ceil(N / 2P) bytes (at most 1 MiB,
// whole elements), at least 2P of them and a multiple of P; chunk c, rank
// c's, is segments [c*spr, (c+1)*spr). Segment s of chunk c starts raw at
// rank c-1 and travels c-1 -> c-2 -> ... -> c, each rank folding its own
// input in front, so rank q ends with the run q .. c-1 and the owner with
// every rank. Where a chunk has more than 2 segments, the ring runs on: the
// owner forwards segments s < spr-2 once more, to c-1, which then holds its
// input folded with the whole. The root receives every owner's chunk.
std::vector<int> gloo_ring_sources(std::size_t n, DType dtype, int P, int root, int q,
                                   std::size_t j) {
  const std::size_t e = element_size(dtype), N = n * e, ranks = static_cast<std::size_t>(P);
  if (P == 1 || N == 0) return {q};
  const std::size_t max_segment = e * ((std::size_t{1} << 20) / e);
  const std::size_t segment_bytes = round_up(std::min(ceil_div(N, 2 * ranks), max_segment), e);
  const std::size_t segments = round_up(std::max(ceil_div(N, segment_bytes), 2 * ranks), ranks);
  const std::size_t spr = segments / ranks, g = j / (segment_bytes / e);
  const int c = static_cast<int>(g / spr);
  const std::size_t s = g % spr;
  const std::vector<int> everyone = run_from(c, c, P);
  if (q == root || q == c) return everyone;
  if (q == (c - 1 + P) % P && s + 2 < spr) {
    std::vector<int> twice{q};
    twice.insert(twice.end(), everyone.begin(), everyone.end());
    return twice;
  }
  return run_from(q, c, P);
}

}  // namespace ringlab::exercises
