#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ops/reduce_op.hpp"

using namespace ringlab;

namespace {
template <typename T>
std::vector<T> apply(ReduceOp op, std::vector<T> acc, const std::vector<T>& in) {
  reduce_host(dtype_of<T>(), op, reinterpret_cast<std::byte*>(acc.data()),
              reinterpret_cast<const std::byte*>(in.data()), acc.size());
  return acc;
}
}  // namespace

TEST_CASE("every op on integers, element-wise") {
  const std::vector<std::int64_t> a{6, -3, 12}, b{3, 5, 10};
  CHECK(apply(ReduceOp::SUM, a, b) == std::vector<std::int64_t>{9, 2, 22});
  CHECK(apply(ReduceOp::PRODUCT, a, b) == std::vector<std::int64_t>{18, -15, 120});
  CHECK(apply(ReduceOp::MIN, a, b) == std::vector<std::int64_t>{3, -3, 10});
  CHECK(apply(ReduceOp::MAX, a, b) == std::vector<std::int64_t>{6, 5, 12});
  CHECK(apply(ReduceOp::BAND, a, b) == std::vector<std::int64_t>{6 & 3, -3 & 5, 12 & 10});
  CHECK(apply(ReduceOp::BOR, a, b) == std::vector<std::int64_t>{6 | 3, -3 | 5, 12 | 10});
  CHECK(apply(ReduceOp::BXOR, a, b) == std::vector<std::int64_t>{6 ^ 3, -3 ^ 5, 12 ^ 10});
  const std::vector<std::int32_t> c{1, 2}, d{4, 8};
  CHECK(apply(ReduceOp::BOR, c, d) == std::vector<std::int32_t>{5, 10});
}

TEST_CASE("floating ops, and AVG travels as SUM then divides") {
  const std::vector<double> a{1.5, -2.0}, b{0.25, 4.0};
  CHECK(apply(ReduceOp::SUM, a, b) == std::vector<double>{1.75, 2.0});
  CHECK(apply(ReduceOp::MAX, a, b) == std::vector<double>{1.5, 4.0});
  CHECK(wire_op(ReduceOp::AVG) == ReduceOp::SUM);
  std::vector<float> sums{6.0f, 9.0f};
  divide_host(DType::Float32, reinterpret_cast<std::byte*>(sums.data()), 2, 3);
  CHECK(sums == std::vector<float>{2.0f, 3.0f});
}

TEST_CASE("an op that does not fit the dtype is a clear error") {
  CHECK_FALSE(op_applies(ReduceOp::BXOR, DType::Float32));
  CHECK_FALSE(op_applies(ReduceOp::AVG, DType::Int64));
  CHECK(op_applies(ReduceOp::MIN, DType::Float64));
  try {
    check_op(ReduceOp::BAND, DType::Float64);
    FAIL("expected an error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("band does not apply to dtype float64") != std::string::npos);
  }
  std::vector<float> x{1.0f}, y{2.0f};
  CHECK_THROWS_AS(apply(ReduceOp::BOR, x, y), std::invalid_argument);
}

TEST_CASE("op names parse like torch.distributed's") {
  CHECK(parse_op("SUM") == ReduceOp::SUM);
  CHECK(parse_op("product") == ReduceOp::PRODUCT);
  CHECK(parse_op("bxor") == ReduceOp::BXOR);
  CHECK_THROWS_WITH_AS(parse_op("mean"), doctest::Contains("unknown reduce op 'mean'"),
                       std::invalid_argument);
}
