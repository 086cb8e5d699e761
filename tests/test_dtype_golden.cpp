// Every dtype against real PyTorch: printing, the float16/bfloat16
// conversions, and one step of every reduce op. The expected values are
// tests/golden/make_dtype_golden.py's, made by torch 1.13 (never by ringlab).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "golden_values.hpp"
#include "ops/reduce_op.hpp"
#include "ops/tensor.hpp"

using ringlab::DType;
using ringlab::Tensor;

TEST_CASE("every dtype prints exactly as torch 1.13 prints it") {
  const auto cases = golden::read_json("dtype_print.json");
  REQUIRE(cases.size() > 200);
  int checked = 0;
  for (const auto& c : cases) {
    const DType dtype = ringlab::parse_dtype(c["dtype"].get<std::string>());
    const Tensor t = golden::tensor(dtype, golden::expand_runs(c["values"]), c["dim"].get<int>());
    const std::string repr = c["repr"];
    CAPTURE(repr);
    CHECK(t.to_string() == repr);
    ++checked;
  }
  CHECK(checked == static_cast<int>(cases.size()));
}

TEST_CASE("float16 and bfloat16 round doubles as torch does: through float, to nearest even") {
  const auto golden = golden::read_json("dtype_convert.json");
  const std::vector<std::string> inputs = golden["inputs"];
  const std::vector<int> half = golden["float16"];
  const std::vector<int> bf16 = golden["bfloat16"];
  REQUIRE(inputs.size() == half.size());
  REQUIRE(inputs.size() == bf16.size());
  int wrong_half = 0, wrong_bf16 = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const double x = golden::number(inputs[i]);
    const auto h = static_cast<ringlab::Half>(x).bits;
    const auto b = static_cast<ringlab::BFloat16>(x).bits;
    // nan's bits differ between torch's conversions too; only nan-ness counts.
    const bool nan = std::isnan(x);
    if (nan ? (h & 0x7C00) != 0x7C00 || (h & 0x3FF) == 0 : h != half[i]) {
      ++wrong_half;
      CAPTURE(inputs[i]);
      CHECK(h == half[i]);
    }
    if (nan ? b != bf16[i] : b != bf16[i]) {
      ++wrong_bf16;
      CAPTURE(inputs[i]);
      CHECK(b == bf16[i]);
    }
    // A tensor element is set the same way.
    Tensor t(DType::Float16, {1});
    t.set_from_double(0, x);
    CHECK(t.data<ringlab::Half>()[0].bits == h);
  }
  CHECK(wrong_half == 0);
  CHECK(wrong_bf16 == 0);
}

TEST_CASE("every float16 and bfloat16 value widens exactly (closed form)") {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double sign = bits & 0x8000 ? -1.0 : 1.0;
    // float16: 5 exponent bits, bias 15, 10 fraction bits.
    const int e = static_cast<int>((bits >> 10) & 0x1F), m = static_cast<int>(bits & 0x3FF);
    const double half = e == 0    ? sign * std::ldexp(m, -24)
                        : e == 31 ? (m ? NAN : sign * INFINITY)
                                  : sign * std::ldexp(1024 + m, e - 25);
    const double got = static_cast<double>(ringlab::Half::from_bits(static_cast<std::uint16_t>(bits)));
    if (std::isnan(half) ? !std::isnan(got) : got != half) {
      CAPTURE(bits);
      FAIL_CHECK("float16 widened to " << got << ", expected " << half);
    }
    // bfloat16: float's top 16 bits.
    const int be = static_cast<int>((bits >> 7) & 0xFF), bm = static_cast<int>(bits & 0x7F);
    const double bf = be == 0     ? sign * std::ldexp(bm, -133)
                      : be == 255 ? (bm ? NAN : sign * INFINITY)
                                  : sign * std::ldexp(128 + bm, be - 134);
    const double bgot =
        static_cast<double>(ringlab::BFloat16::from_bits(static_cast<std::uint16_t>(bits)));
    if (std::isnan(bf) ? !std::isnan(bgot) : bgot != bf) {
      CAPTURE(bits);
      FAIL_CHECK("bfloat16 widened to " << bgot << ", expected " << bf);
    }
  }
}

// One reduce step (reduce_host, or divide_host for AVG's division) on the
// golden pairs, against torch's a + b, a * b, minimum, maximum, &, |, ^, a / n.
TEST_CASE("one step of every reduce op is torch's arithmetic, on every dtype") {
  const auto cases = golden::read_json("dtype_arith.json");
  int dtypes_ops = 0;
  for (const auto& c : cases) {
    const std::string dtype_name = c["dtype"];
    const DType dtype = ringlab::parse_dtype(dtype_name);
    const Tensor a = golden::tensor(dtype, c["a"]);
    const Tensor b = golden::tensor(dtype, c["b"]);
    for (const auto& [op_text, out] : c["out"].items()) {
      CAPTURE(dtype_name);
      CAPTURE(op_text);
      Tensor acc = a;
      if (op_text.starts_with("avg")) {
        ringlab::divide_host(dtype, acc.bytes().data(), acc.numel(), std::stoi(op_text.substr(3)));
      } else {
        const ringlab::ReduceOp op = ringlab::parse_op(op_text);
        REQUIRE(ringlab::op_applies(op, dtype));
        ringlab::reduce_host(dtype, op, acc.bytes().data(), b.bytes().data(), acc.numel());
      }
      const auto expected = golden::normalized(dtype, out);
      const auto got = golden::texts_of(acc);
      REQUIRE(got.size() == expected.size());
      int wrong = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] == expected[i]) continue;
        if (++wrong <= 3) {
          const std::string x = c["a"][i], y = c["b"][i];
          FAIL_CHECK(x << " " << op_text << " " << y << ": ringlab " << got[i] << ", torch "
                        << expected[i]);
        }
      }
      CHECK(wrong == 0);
      ++dtypes_ops;
    }
  }
  // 10 dtypes: 6 integer-like with 7 ops, 4 floating with 4 ops and 2 AVG worlds.
  CHECK(dtypes_ops == 6 * 7 + 4 * 6);
}
