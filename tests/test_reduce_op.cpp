#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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

TEST_CASE("integers wrap on overflow in every width, without undefined behaviour") {
  // torch.tensor([100], dtype=torch.int8) + 100 is tensor([-56], dtype=torch.int8)
  CHECK(apply(ReduceOp::SUM, std::vector<std::int8_t>{100, -128}, {100, -1}) ==
        std::vector<std::int8_t>{-56, 127});
  CHECK(apply(ReduceOp::SUM, std::vector<std::uint8_t>{200}, {100}) == std::vector<std::uint8_t>{44});
  // int16 * int16 would overflow int after C++'s promotion; it must wrap instead.
  CHECK(apply(ReduceOp::PRODUCT, std::vector<std::int16_t>{-32768, 300}, {-32768, 300}) ==
        std::vector<std::int16_t>{0, 24464});
  CHECK(apply(ReduceOp::SUM, std::vector<std::int64_t>{INT64_MAX}, {1}) ==
        std::vector<std::int64_t>{INT64_MIN});
}

TEST_CASE("bool: SUM and MAX are or, PRODUCT and MIN are and, as torch's bool arithmetic") {
  const std::vector<std::uint8_t> a{0, 0, 1, 1}, b{0, 1, 0, 1};
  auto run = [&](ReduceOp op, std::vector<std::uint8_t> acc, const std::vector<std::uint8_t>& in) {
    reduce_host(DType::Bool, op, reinterpret_cast<std::byte*>(acc.data()),
                reinterpret_cast<const std::byte*>(in.data()), acc.size());
    return acc;
  };
  CHECK(run(ReduceOp::SUM, a, b) == std::vector<std::uint8_t>{0, 1, 1, 1});
  CHECK(run(ReduceOp::MAX, a, b) == std::vector<std::uint8_t>{0, 1, 1, 1});
  CHECK(run(ReduceOp::PRODUCT, a, b) == std::vector<std::uint8_t>{0, 0, 0, 1});
  CHECK(run(ReduceOp::MIN, a, b) == std::vector<std::uint8_t>{0, 0, 0, 1});
  CHECK(run(ReduceOp::BXOR, a, b) == std::vector<std::uint8_t>{0, 1, 1, 0});
  // A byte other than 0 or 1 (from the network) is true, and results are 0 or 1.
  CHECK(run(ReduceOp::BAND, {7, 2}, {1, 0}) == std::vector<std::uint8_t>{1, 0});
}

TEST_CASE("MIN and MAX propagate nan from either side, as torch.minimum and torch.maximum do") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (ReduceOp op : {ReduceOp::MIN, ReduceOp::MAX}) {
    const auto ab = apply(op, std::vector<double>{nan, 1.0}, {1.0, nan});
    CHECK(std::isnan(ab[0]));
    CHECK(std::isnan(ab[1]));
    const auto f = apply(op, std::vector<float>{1.0f, nanf("")}, {nanf(""), 2.0f});
    CHECK(std::isnan(f[0]));
    CHECK(std::isnan(f[1]));
  }
}

TEST_CASE("the refusals name the op, the dtype and the dtypes that work") {
  CHECK_THROWS_WITH_AS(check_op(ReduceOp::AVG, DType::UInt8),
                       doctest::Contains("avg does not apply to dtype uint8: AVG divides, so it "
                                         "needs a floating tensor (float16, bfloat16, float32, "
                                         "float64)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_op(ReduceOp::BOR, DType::BFloat16),
                       doctest::Contains("bor does not apply to dtype bfloat16: bitwise ops need "
                                         "an integer or bool tensor (bool, uint8, int8, int16, "
                                         "int32, int64)"),
                       std::invalid_argument);
  CHECK_THROWS_AS(check_op(ReduceOp::AVG, DType::Bool), std::invalid_argument);
  CHECK(op_applies(ReduceOp::SUM, DType::Bool));
  CHECK(op_applies(ReduceOp::BXOR, DType::Bool));
  CHECK(op_applies(ReduceOp::AVG, DType::Float16));
}
