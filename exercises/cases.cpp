#include "exercises/cases.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises/reduce_forms.hpp"

namespace ringlab::exercises {

namespace {

bool has_op(Shape shape) {
  return shape == Shape::BlocksReduce || shape == Shape::AllReduce || shape == Shape::Reduce;
}
bool has_root(Shape shape) { return shape == Shape::Rooted || shape == Shape::Reduce; }
bool has_blocks(Shape shape) {
  return shape == Shape::BlocksReduce || shape == Shape::Blocks || shape == Shape::AllToAll;
}

std::vector<int> every_rank(int ranks) {
  std::vector<int> all(static_cast<std::size_t>(ranks));
  for (int s = 0; s < ranks; ++s) all[static_cast<std::size_t>(s)] = s;
  return all;
}

// op over every rank of their element j; AVG divided by P (exact: see the header).
double reduced(const Case& c, std::size_t j) {
  const double all =
      fold(c.op, every_rank(c.ranks), [&](int s) { return input_value(c, s, j); });
  return c.op == ReduceOp::AVG ? all / c.ranks : all;
}

double gloo_ring_value(const Case& c, int rank, std::size_t j) {
  const std::vector<int> run = gloo_ring_sources(c.count, c.dtype, c.ranks, c.root, rank, j);
  const double value = fold(c.op, run, [&](int s) { return input_value(c, s, j); });
  // Only the root divides for AVG; the others keep the sums on the wire.
  return c.op == ReduceOp::AVG && rank == c.root ? value / c.ranks : value;
}

}  // namespace

bool takes_op(const Exercise& exercise) { return has_op(exercise.shape); }

double held_as(DType dtype, double v) {
  return visit_dtype(dtype, [&]<typename T>() { return static_cast<double>(ringlab::wrapped<T>(v)); });
}

namespace {
double input_pattern(const Case& c, int rank, std::size_t i) {
  const std::size_t r = static_cast<std::size_t>(rank);
  switch (c.op) {
    case ReduceOp::PRODUCT:
      return (r + 2 * i) % 3 == 0 ? 2 : 1;
    case ReduceOp::MIN:
    case ReduceOp::MAX:
      return static_cast<double>((5 * r + 3 * i) % 11);
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      return static_cast<double>((37 * r + 11 * i + 5) % 128);
    case ReduceOp::AVG:
      return c.ranks * (1.0 + static_cast<double>((r + i) % 3));
    case ReduceOp::SUM:
      break;
  }
  return 1.0 + 2.0 * rank + static_cast<double>(i);
}
}  // namespace

double input_value(const Case& c, int rank, std::size_t i) {
  // Every pattern above is true almost everywhere as a bool, so that or and
  // and would pass without the other ranks' inputs: bool gets one of its own.
  if (c.dtype == DType::Bool) return (static_cast<std::size_t>(rank) + i) % 3 != 0 ? 1 : 0;
  return held_as(c.dtype, input_pattern(c, rank, i));
}

std::string describe(const Exercise& exercise, const Case& c) {
  std::string text = std::to_string(c.ranks) + (c.ranks == 1 ? " rank" : " ranks");
  if (exercise.shape == Shape::Barrier) return text;
  text += ", " + std::to_string(c.count) + " " + std::string(dtype_name(c.dtype)) +
          (c.count == 1 ? " element" : " elements") +
          (has_blocks(exercise.shape) ? " per block" : " per rank");
  if (has_root(exercise.shape)) text += ", root " + std::to_string(c.root);
  if (has_op(exercise.shape)) text += ", op " + std::string(op_name(c.op));
  if (exercise.shape == Shape::Buckets) text += ", 3 buckets";
  return text;
}

std::vector<Case> cases_for(const Exercise& exercise, int ranks, bool large) {
  if (exercise.shape == Shape::Barrier) return {Case{.ranks = ranks}};
  const bool buckets = exercise.shape == Shape::Buckets;
  const DType first = buckets ? DType::Float32 : DType::Int64;
  std::vector<Case> cases = {
      {.ranks = ranks, .count = 0, .root = 0, .dtype = first},
      {.ranks = ranks, .count = 1, .root = ranks - 1, .dtype = first},
      {.ranks = ranks, .count = 7, .root = ranks / 2, .dtype = first},
  };
  const std::vector<ReduceOp> ops = has_op(exercise.shape)
                                        ? std::vector<ReduceOp>(std::begin(kAllReduceOps),
                                                                std::end(kAllReduceOps))
                                        : std::vector<ReduceOp>{ReduceOp::SUM};
  for (ReduceOp op : ops)
    for (DType dtype : kCheckedDTypes) {
      if ((op == ReduceOp::SUM && dtype == first) || !op_applies(op, dtype) || buckets) continue;
      const int root = static_cast<int>(cases.size()) % ranks;
      cases.push_back({.ranks = ranks, .count = 7, .root = root, .op = op, .dtype = dtype});
    }
  if (large) cases.push_back({.ranks = ranks, .count = kLargeCount, .root = 0, .dtype = first});
  return cases;
}

Case cost_case(const Exercise& exercise) {
  Case c{.ranks = 8, .count = 1024};
  if (exercise.shape == Shape::Buckets) c.dtype = DType::Float32;
  if (exercise.shape == Shape::Barrier) c.count = 0;
  return c;
}

std::vector<BufferPlan> buffers_of(const Exercise& exercise, const Case& c, int rank) {
  const std::size_t n = c.count, all = n * static_cast<std::size_t>(c.ranks);
  const std::size_t own = n * static_cast<std::size_t>(rank);
  switch (exercise.shape) {
    case Shape::PingPong:
    case Shape::Rooted:
    case Shape::AllReduce:
    case Shape::Reduce:
      return {{"buf", n, 0, n}};
    case Shape::BlocksReduce:
      return {{"buf", all, 0, all}};
    case Shape::Blocks:
      return {{"buf", all, own, n}};
    case Shape::AllToAll:
      return {{"send", all, 0, all}, {"recv", all, 0, 0}};
    case Shape::Barrier:
      return {};
    case Shape::Buckets:
      return {{"grads", n, 0, n}};
  }
  return {};
}

std::vector<Chunk> blocks_of(const Exercise& exercise, const Case& c) {
  if (exercise.shape == Shape::Buckets) {
    std::vector<Chunk> buckets = split_even(c.count, 3);
    std::reverse(buckets.begin(), buckets.end());  // backward fills the last layers first
    return buckets;
  }
  if (has_blocks(exercise.shape)) return equal_blocks(c.count, c.ranks);
  return {};
}

double initial_value(const Exercise& exercise, const Case& c, int rank, int buffer, std::size_t i) {
  const BufferPlan plan = buffers_of(exercise, c, rank)[static_cast<std::size_t>(buffer)];
  if (i < plan.input_offset || i >= plan.input_offset + plan.input_count) return 0;
  return input_value(c, rank, exercise.shape == Shape::Blocks ? i - plan.input_offset : i);
}

bool checked(const Exercise& exercise, const Case& c, int rank, int buffer, std::size_t i) {
  switch (exercise.shape) {
    case Shape::BlocksReduce:
      return i / c.count == static_cast<std::size_t>(rank);
    case Shape::AllToAll:
      return buffer == 1;
    default:
      return true;
  }
}

namespace {
double expected_unheld(const Exercise& exercise, const Case& c, int rank, std::size_t i) {
  const std::size_t n = c.count;
  switch (exercise.shape) {
    case Shape::PingPong:
      return c.ranks >= 2 && rank <= 1 ? input_value(c, 0, i) + input_value(c, 1, i)
                                       : input_value(c, rank, i);
    case Shape::Rooted:
      return input_value(c, c.root, i);
    case Shape::BlocksReduce:
    case Shape::AllReduce:
      return reduced(c, i);
    case Shape::Reduce:
      return gloo_ring_value(c, rank, i);
    case Shape::Blocks:
      return input_value(c, static_cast<int>(i / n), i % n);
    case Shape::AllToAll:
      return input_value(c, static_cast<int>(i / n), static_cast<std::size_t>(rank) * n + i % n);
    case Shape::Barrier:
      return 0;
    case Shape::Buckets: {
      // As the transport divides: the float32 sum, then / P in float32.
      float sum = 0;
      for (int s = 0; s < c.ranks; ++s) sum += static_cast<float>(input_value(c, s, i));
      return static_cast<double>(sum / static_cast<float>(c.ranks));
    }
  }
  return 0;
}
}  // namespace

double expected_value(const Exercise& exercise, const Case& c, int rank, int, std::size_t i) {
  return held_as(c.dtype, expected_unheld(exercise, c, rank, i));
}

std::vector<int> expected_sources(const Exercise& exercise, const Case& c, int rank, int,
                                  std::size_t i) {
  switch (exercise.shape) {
    case Shape::PingPong:
      return c.ranks >= 2 && rank <= 1 ? std::vector<int>{0, 1} : std::vector<int>{rank};
    case Shape::Rooted:
      return {c.root};
    case Shape::Blocks:
    case Shape::AllToAll:
      return {static_cast<int>(i / c.count)};
    case Shape::Reduce: {
      std::vector<int> run = gloo_ring_sources(c.count, c.dtype, c.ranks, c.root, rank, i);
      std::sort(run.begin(), run.end());
      run.erase(std::unique(run.begin(), run.end()), run.end());
      return run;
    }
    default:
      return every_rank(c.ranks);
  }
}

bool same_value(double held, double expected, DType dtype) {
  if (!is_floating(dtype)) return held == expected;
  // Four units in the last place of float32, or of float64.
  const double ulps = dtype == DType::Float32 ? 0x1p-21 : 0x1p-50;
  return std::fabs(held - expected) <= ulps * std::max(1.0, std::fabs(expected));
}

}  // namespace ringlab::exercises
