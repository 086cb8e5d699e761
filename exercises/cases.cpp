#include "exercises/cases.hpp"

#include <algorithm>

namespace ringlab::exercises {

namespace {

bool takes_op(Shape shape) { return shape == Shape::BlocksReduce || shape == Shape::AllReduce; }
bool has_blocks(Shape shape) {
  return shape == Shape::BlocksReduce || shape == Shape::Blocks || shape == Shape::AllToAll;
}

double combine(ReduceOp op, double a, double b) {
  return op == ReduceOp::MAX ? std::max(a, b) : a + b;
}

// op over every rank of their element j.
double reduced(const Case& c, std::size_t j) {
  double acc = input_value(0, j);
  for (int s = 1; s < c.ranks; ++s) acc = combine(c.op, acc, input_value(s, j));
  return acc;
}

std::vector<int> every_rank(int ranks) {
  std::vector<int> all(static_cast<std::size_t>(ranks));
  for (int s = 0; s < ranks; ++s) all[static_cast<std::size_t>(s)] = s;
  return all;
}

}  // namespace

double input_value(int rank, std::size_t i) { return 1.0 + 2.0 * rank + static_cast<double>(i); }

std::string describe(const Exercise& exercise, const Case& c) {
  std::string text = std::to_string(c.ranks) + (c.ranks == 1 ? " rank" : " ranks");
  if (exercise.shape == Shape::Barrier) return text;
  text += ", " + std::to_string(c.count) + " " + std::string(dtype_name(c.dtype)) +
          (c.count == 1 ? " element" : " elements") +
          (has_blocks(exercise.shape) ? " per block" : " per rank");
  if (exercise.shape == Shape::Rooted) text += ", root " + std::to_string(c.root);
  if (takes_op(exercise.shape)) text += ", op " + std::string(op_name(c.op));
  if (exercise.shape == Shape::Buckets) text += ", 3 buckets";
  return text;
}

std::vector<Case> cases_for(const Exercise& exercise, int ranks, bool large) {
  const DType dtype = exercise.shape == Shape::Buckets ? DType::Float32 : DType::Int64;
  if (exercise.shape == Shape::Barrier) return {Case{.ranks = ranks}};
  std::vector<Case> cases = {
      {.ranks = ranks, .count = 0, .root = 0, .dtype = dtype},
      {.ranks = ranks, .count = 1, .root = ranks - 1, .dtype = dtype},
      {.ranks = ranks, .count = 7, .root = ranks / 2, .dtype = dtype},
  };
  if (takes_op(exercise.shape)) cases[2].op = ReduceOp::MAX;
  if (large) cases.push_back({.ranks = ranks, .count = kLargeCount, .root = 0, .dtype = dtype});
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
  return input_value(rank, exercise.shape == Shape::Blocks ? i - plan.input_offset : i);
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

double expected_value(const Exercise& exercise, const Case& c, int rank, int, std::size_t i) {
  const std::size_t n = c.count;
  switch (exercise.shape) {
    case Shape::PingPong:
      return c.ranks >= 2 && rank <= 1 ? input_value(0, i) + input_value(1, i)
                                       : input_value(rank, i);
    case Shape::Rooted:
      return input_value(c.root, i);
    case Shape::BlocksReduce:
    case Shape::AllReduce:
      return reduced(c, i);
    case Shape::Blocks:
      return input_value(static_cast<int>(i / n), i % n);
    case Shape::AllToAll:
      return input_value(static_cast<int>(i / n), static_cast<std::size_t>(rank) * n + i % n);
    case Shape::Barrier:
      return 0;
    case Shape::Buckets: {
      // As the transport divides: the float32 sum, then / P in float32.
      float sum = 0;
      for (int s = 0; s < c.ranks; ++s) sum += static_cast<float>(input_value(s, i));
      return static_cast<double>(sum / static_cast<float>(c.ranks));
    }
  }
  return 0;
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
    default:
      return every_rank(c.ranks);
  }
}

}  // namespace ringlab::exercises
