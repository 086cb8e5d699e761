// Tests for ringlab::Tensor. The expected printouts are what PyTorch prints
// for the same tensor with its default print options, worked out from the
// rules in torch/_tensor_str.py (noted next to the less obvious ones).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ops/tensor.hpp"

using ringlab::DType;
using ringlab::Tensor;

namespace {

using i64 = std::int64_t;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// What a call threw, to check that error messages say what went wrong.
template <typename Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace

// ---------------------------------------------------------------------------
// dtype names

TEST_CASE("parse_dtype accepts PyTorch's names and aliases") {
  CHECK(ringlab::parse_dtype("int32") == DType::Int32);
  CHECK(ringlab::parse_dtype("int") == DType::Int32);
  CHECK(ringlab::parse_dtype("int64") == DType::Int64);
  CHECK(ringlab::parse_dtype("long") == DType::Int64);
  CHECK(ringlab::parse_dtype("float32") == DType::Float32);
  CHECK(ringlab::parse_dtype("float") == DType::Float32);
  CHECK(ringlab::parse_dtype("float64") == DType::Float64);
  CHECK(ringlab::parse_dtype("double") == DType::Float64);
  CHECK(ringlab::parse_dtype("torch.int32") == DType::Int32);
  CHECK(ringlab::parse_dtype("torch.long") == DType::Int64);
  CHECK(ringlab::parse_dtype("torch.float") == DType::Float32);
  CHECK(ringlab::parse_dtype("torch.float64") == DType::Float64);
}

TEST_CASE("parse_dtype knows every dtype of the table by PyTorch's names") {
  CHECK(ringlab::parse_dtype("bool") == DType::Bool);
  CHECK(ringlab::parse_dtype("uint8") == DType::UInt8);
  CHECK(ringlab::parse_dtype("int8") == DType::Int8);
  CHECK(ringlab::parse_dtype("int16") == DType::Int16);
  CHECK(ringlab::parse_dtype("short") == DType::Int16);
  CHECK(ringlab::parse_dtype("torch.float16") == DType::Float16);
  CHECK(ringlab::parse_dtype("half") == DType::Float16);
  CHECK(ringlab::parse_dtype("bfloat16") == DType::BFloat16);
  for (DType d : ringlab::kAllDTypes) {
    CAPTURE(ringlab::dtype_name(d));
    CHECK(ringlab::parse_dtype(ringlab::dtype_name(d)) == d);
    CHECK(ringlab::parse_dtype(ringlab::torch_dtype(d)) == d);
  }
  // torch's sizes: torch.tensor([], dtype=d).element_size()
  CHECK(ringlab::element_size(DType::Bool) == 1);
  CHECK(ringlab::element_size(DType::UInt8) == 1);
  CHECK(ringlab::element_size(DType::Int16) == 2);
  CHECK(ringlab::element_size(DType::Float16) == 2);
  CHECK(ringlab::element_size(DType::BFloat16) == 2);
}

TEST_CASE("parse_dtype rejects unknown names, naming the bad value and the valid ones") {
  CHECK_THROWS_AS(ringlab::parse_dtype("uint16"), std::invalid_argument);
  CHECK_THROWS_AS(ringlab::parse_dtype(""), std::invalid_argument);
  CHECK_THROWS_AS(ringlab::parse_dtype("Float32"), std::invalid_argument);
  CHECK_THROWS_AS(ringlab::parse_dtype("torch."), std::invalid_argument);
  const std::string msg = error_message([] { ringlab::parse_dtype("complex64"); });
  CHECK(msg.find("'complex64'") != std::string::npos);
  for (const char* valid : {"bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                            "bfloat16", "float32", "float64", "long", "double", "half"}) {
    CHECK(msg.find(valid) != std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// Construction and element access

TEST_CASE("a default tensor is 1-D, int64 and empty") {
  const Tensor t;
  CHECK(t.dtype() == DType::Int64);
  CHECK(t.dim() == 1);
  CHECK(t.shape() == std::vector<i64>{0});
  CHECK(t.numel() == 0);
  CHECK(t.nbytes() == 0);
}

TEST_CASE("constructors give the shape, dtype and zero-filled storage asked for") {
  for (DType d : ringlab::kAllDTypes) {
    CAPTURE(ringlab::dtype_name(d));
    const Tensor t(d, {5});
    CHECK(t.dtype() == d);
    CHECK(t.dim() == 1);
    CHECK(t.numel() == 5);
    CHECK(t.nbytes() == 5 * ringlab::element_size(d));
    for (std::size_t i = 0; i < 5; ++i) CHECK(t.item_as_double(i) == 0.0);

    const Tensor s(d, {});
    CHECK(s.dim() == 0);
    CHECK(s.numel() == 1);
    CHECK(s.nbytes() == ringlab::element_size(d));
  }

  const Tensor z = Tensor::zeros(3);
  CHECK(z.dtype() == DType::Float32);
  CHECK(z.shape() == std::vector<i64>{3});

  const Tensor a = Tensor::arange(4, DType::Float64);
  CHECK(a.dtype() == DType::Float64);
  CHECK(a.data<double>()[3] == 3.0);
  CHECK(Tensor::arange(4).dtype() == DType::Int64);

  const Tensor sc = Tensor::scalar(2.5, DType::Float64);
  CHECK(sc.dim() == 0);
  CHECK(sc.item_as_double() == 2.5);
}

TEST_CASE("of() and from() keep the values; integer dtypes truncate like PyTorch") {
  const Tensor ints = Tensor::of({i64{7}, i64{-8}});
  CHECK(ints.dtype() == DType::Int64);
  CHECK(ints.data<i64>()[1] == -8);

  const Tensor floats = Tensor::of({0.5, 1.25});
  CHECK(floats.dtype() == DType::Float32);
  CHECK(floats.data<float>()[1] == 1.25f);

  // torch.tensor([2.7, -2.7], dtype=torch.int32) is tensor([ 2, -2], dtype=torch.int32)
  const Tensor truncated = Tensor::of({2.7, -2.7}, DType::Int32);
  CHECK(truncated.data<std::int32_t>()[0] == 2);
  CHECK(truncated.data<std::int32_t>()[1] == -2);

  const std::vector<std::int32_t> v{1, 2, 3};
  const Tensor from = Tensor::from(std::span<const std::int32_t>(v));
  CHECK(from.dtype() == DType::Int32);
  CHECK(from.numel() == 3);
  CHECK(from.data<std::int32_t>()[2] == 3);

  // Large int64 values are stored exactly (no trip through double).
  const Tensor big = Tensor::of({std::numeric_limits<i64>::max()});
  CHECK(big.data<i64>()[0] == std::numeric_limits<i64>::max());
}

TEST_CASE("set_from_double and item_as_double convert per dtype") {
  Tensor t(DType::Int32, {2});
  t.set_from_double(1, 41.9);
  CHECK(t.item_as_double(1) == 41.0);

  Tensor f(DType::Float32, {1});
  f.set_from_double(0, 0.1);
  CHECK(f.item_as_double(0) == static_cast<double>(0.1f));

  // Values an integer dtype cannot hold are refused rather than wrapped.
  CHECK_THROWS_AS(t.set_from_double(0, kNan), std::invalid_argument);
  CHECK_THROWS_AS(t.set_from_double(0, 3e9), std::invalid_argument);
  CHECK_THROWS_AS(t.set_from_double(0, -kInf), std::invalid_argument);
}

TEST_CASE("indexing returns 0-D tensors and accepts Python's negative indices") {
  const Tensor t = Tensor::of({i64{10}, i64{20}, i64{30}});
  const Tensor first = t[0];
  CHECK(first.dim() == 0);
  CHECK(first.dtype() == DType::Int64);
  CHECK(first.item_as_double() == 10.0);
  CHECK(t[-1].item_as_double() == 30.0);
  CHECK(t[-3].item_as_double() == 10.0);
  CHECK(t[1].to_string() == "tensor(20)");
  CHECK(Tensor::of({0.5, 1.5})[1].to_string() == "tensor(1.5000)");
}

TEST_CASE("same_values compares dtype, shape and bytes") {
  const Tensor a = Tensor::of({i64{1}, i64{2}});
  CHECK(a.same_values(Tensor::of({i64{1}, i64{2}})));
  CHECK_FALSE(a.same_values(Tensor::of({i64{1}, i64{3}})));
  CHECK_FALSE(a.same_values(Tensor::of({1.0, 2.0}, DType::Int32)));                // dtype differs
  CHECK_FALSE(Tensor::scalar(1, DType::Int64).same_values(Tensor::of({i64{1}})));  // shape
  CHECK(Tensor::of({1.0, 2.0}, DType::Int64).same_values(a));
}

TEST_CASE("scalar arithmetic follows PyTorch's type promotion") {
  Tensor t = Tensor::arange(3);
  t += 1;
  CHECK(t.to_string() == "tensor([1, 2, 3])");
  CHECK((t + 1).to_string() == "tensor([2, 3, 4])");
  CHECK((t * 2).to_string() == "tensor([2, 4, 6])");
  // An integer tensor with a float scalar gives the default float dtype.
  const Tensor promoted = t * 1.5;
  CHECK(promoted.dtype() == DType::Float32);
  CHECK(promoted.to_string() == "tensor([1.5000, 3.0000, 4.5000])");
  CHECK((t + 0.5).to_string() == "tensor([1.5000, 2.5000, 3.5000])");

  Tensor z = Tensor::zeros(2);
  z += 1;
  CHECK(z.to_string() == "tensor([1., 1.])");
  CHECK((z * 0.5).to_string() == "tensor([0.5000, 0.5000])");

  Tensor d = Tensor::zeros(2, DType::Float64);
  d += 0.25;
  CHECK(d.dtype() == DType::Float64);
  CHECK(d.to_string() == "tensor([0.2500, 0.2500], dtype=torch.float64)");

  // Integer overflow wraps around as in PyTorch.
  const Tensor m =
      Tensor::of({static_cast<double>(std::numeric_limits<std::int32_t>::max())}, DType::Int32);
  CHECK((m + 1).data<std::int32_t>()[0] == std::numeric_limits<std::int32_t>::min());
}

// ---------------------------------------------------------------------------
// Errors

TEST_CASE("errors: wrong dtype, bad index, bad shape, in-place promotion") {
  Tensor t = Tensor::arange(3);
  CHECK_THROWS_AS(t.data<float>(), std::invalid_argument);
  CHECK_THROWS_AS(std::as_const(t).data<std::int32_t>(), std::invalid_argument);
  const std::string msg = error_message([&] { t.data<double>(); });
  CHECK(msg.find("float64") != std::string::npos);
  CHECK(msg.find("int64") != std::string::npos);

  CHECK_THROWS_AS(t[3], std::out_of_range);
  CHECK_THROWS_AS(t[-4], std::out_of_range);
  CHECK(error_message([&] { t[5]; }).find("5") != std::string::npos);
  CHECK_THROWS_AS(t.item_as_double(3), std::out_of_range);
  CHECK_THROWS_AS(t.set_from_double(3, 1.0), std::out_of_range);
  CHECK_THROWS_AS(Tensor::scalar(1)[0], std::invalid_argument);  // a 0-D tensor has no index

  CHECK_THROWS_AS(Tensor(DType::Int64, {2, 2}), std::invalid_argument);
  CHECK_THROWS_AS(Tensor(DType::Int64, {-1}), std::invalid_argument);
  CHECK_THROWS_AS(Tensor::zeros(-2), std::invalid_argument);

  // PyTorch: "result type Float can't be cast to the desired output type Long"
  CHECK_THROWS_AS(t += 0.5, std::invalid_argument);
  CHECK(t.to_string() == "tensor([0, 1, 2])");  // unchanged by the failed +=
}

// ---------------------------------------------------------------------------
// Printing: integers

TEST_CASE("printing integer tensors") {
  CHECK(Tensor::of({i64{1}, i64{2}}).to_string() == "tensor([1, 2])");
  CHECK(Tensor::scalar(5, DType::Int64).to_string() == "tensor(5)");
  CHECK(Tensor::scalar(-5, DType::Int64).to_string() == "tensor(-5)");
  // int64 is the dtype PyTorch infers for integers; int32 is named.
  CHECK(Tensor::scalar(5, DType::Int32).to_string() == "tensor(5, dtype=torch.int32)");
  CHECK(Tensor::of({1, 2, 3}, DType::Int32).to_string() == "tensor([1, 2, 3], dtype=torch.int32)");
  // Right-aligned to the widest element.
  CHECK(Tensor::of({i64{1}, i64{100}}).to_string() == "tensor([  1, 100])");
  CHECK(Tensor::of({i64{-1}, i64{2}}).to_string() == "tensor([-1,  2])");
  CHECK(Tensor::of({i64{0}, i64{-100}, i64{7}}).to_string() == "tensor([   0, -100,    7])");
  CHECK(
      Tensor::of({std::numeric_limits<i64>::min(), std::numeric_limits<i64>::max()}).to_string() ==
      "tensor([-9223372036854775808,  9223372036854775807])");
}

TEST_CASE("printing empty tensors names every dtype but float32") {
  CHECK(Tensor().to_string() == "tensor([], dtype=torch.int64)");
  CHECK(Tensor::zeros(0).to_string() == "tensor([])");
  CHECK(Tensor::zeros(0, DType::Int32).to_string() == "tensor([], dtype=torch.int32)");
  CHECK(Tensor::zeros(0, DType::Int64).to_string() == "tensor([], dtype=torch.int64)");
  CHECK(Tensor::zeros(0, DType::Float64).to_string() == "tensor([], dtype=torch.float64)");
}

// ---------------------------------------------------------------------------
// Printing: floats (_Formatter)

TEST_CASE("printing floats whose values are all integral: digits and a dot") {
  CHECK(Tensor::zeros(2).to_string() == "tensor([0., 0.])");
  CHECK(Tensor::scalar(1).to_string() == "tensor(1.)");
  CHECK(Tensor::scalar(2).to_string() == "tensor(2.)");
  CHECK(Tensor::scalar(0).to_string() == "tensor(0.)");
  CHECK(Tensor::of({1.0, 10.0}).to_string() == "tensor([ 1., 10.])");
  CHECK(Tensor::of({-1.0, 2.0}).to_string() == "tensor([-1.,  2.])");
  CHECK(Tensor::of({-0.0}).to_string() == "tensor([-0.])");
  // A range of exactly 1000 stays in this style ("> 1000" switches).
  CHECK(Tensor::of({1.0, 1000.0}).to_string() == "tensor([   1., 1000.])");
  CHECK(Tensor::of({1.0, 2.0}, DType::Float64).to_string() ==
        "tensor([1., 2.], dtype=torch.float64)");
  CHECK(Tensor::scalar(1, DType::Float64).to_string() == "tensor(1., dtype=torch.float64)");
}

TEST_CASE("printing floats with fractions: 4 decimals") {
  CHECK(Tensor::of({0.5, 1.25}).to_string() == "tensor([0.5000, 1.2500])");
  CHECK(Tensor::of({0.1, 0.2}).to_string() == "tensor([0.1000, 0.2000])");
  CHECK(Tensor::of({-0.5, 1.25}).to_string() == "tensor([-0.5000,  1.2500])");
  CHECK(Tensor::of({0.0, 2.5}).to_string() == "tensor([0.0000, 2.5000])");
  CHECK(Tensor::of({0.123456}).to_string() == "tensor([0.1235])");
  CHECK(Tensor::of({12.5, 0.5}).to_string() == "tensor([12.5000,  0.5000])");
  CHECK(Tensor::scalar(2.5).to_string() == "tensor(2.5000)");
  CHECK(Tensor::scalar(2.5, DType::Float64).to_string() == "tensor(2.5000, dtype=torch.float64)");
  CHECK(Tensor::of({0.5, 1.25}, DType::Float64).to_string() ==
        "tensor([0.5000, 1.2500], dtype=torch.float64)");
}

TEST_CASE("printing switches to scientific notation like _Formatter") {
  // A value below 1e-4 (fractional values only).
  CHECK(Tensor::of({1e-5, 1.0}).to_string() == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(Tensor::of({-1e-5, 1.0}).to_string() == "tensor([-1.0000e-05,  1.0000e+00])");
  CHECK(Tensor::scalar(1e-5).to_string() == "tensor(1.0000e-05)");
  // max / min > 1000, for integral values too.
  CHECK(Tensor::of({1.0, 10000.0}).to_string() == "tensor([1.0000e+00, 1.0000e+04])");
  CHECK(Tensor::of({0.5, 1000.5}).to_string() == "tensor([5.0000e-01, 1.0005e+03])");
  // max > 1e8, even for a single value.
  CHECK(Tensor::scalar(1e10).to_string() == "tensor(1.0000e+10)");
  CHECK(Tensor::of({1e9, 2e9}).to_string() == "tensor([1.0000e+09, 2.0000e+09])");
  CHECK(Tensor::of({1e8, 2e8}, DType::Float64).to_string() ==
        "tensor([1.0000e+08, 2.0000e+08], dtype=torch.float64)");
  // Zeros do not take part in the choice but are printed in the chosen style.
  CHECK(Tensor::of({0.0, 1e-5, 1.0}).to_string() == "tensor([0.0000e+00, 1.0000e-05, 1.0000e+00])");
  // The test is made on the stored value: float32's 1e-4 is 9.99999974737875e-05,
  // below 1e-4, while float64's 1e-4 is not.
  CHECK(Tensor::of({1e-4, 0.01}).to_string() == "tensor([1.0000e-04, 1.0000e-02])");
  CHECK(Tensor::of({1e-4, 0.01}, DType::Float64).to_string() ==
        "tensor([0.0001, 0.0100], dtype=torch.float64)");
}

TEST_CASE("printing nan and inf") {
  CHECK(Tensor::of({kNan, kInf, -kInf}).to_string() == "tensor([nan, inf, -inf])");
  CHECK(Tensor::scalar(kNan).to_string() == "tensor(nan)");
  CHECK(Tensor::scalar(-kNan).to_string() == "tensor(nan)");  // Python never prints "-nan"
  CHECK(Tensor::scalar(-kInf, DType::Float64).to_string() == "tensor(-inf, dtype=torch.float64)");
  // The width comes from the finite values; nan and inf are padded to it, or
  // stick out when wider.
  CHECK(Tensor::of({1.0, kNan}).to_string() == "tensor([1., nan])");
  CHECK(Tensor::of({100.0, kNan}).to_string() == "tensor([100.,  nan])");
  CHECK(Tensor::of({0.0, kNan}).to_string() == "tensor([0., nan])");
  CHECK(Tensor::of({0.5, kInf}).to_string() == "tensor([0.5000,    inf])");
  CHECK(Tensor::of({1e-5, -kInf}).to_string() == "tensor([1.0000e-05,       -inf])");
}

// ---------------------------------------------------------------------------
// Printing: summarization and line wrapping (_vector_str, _add_suffixes)

TEST_CASE("more than 1000 elements are summarized with edgeitems 3") {
  CHECK(Tensor::zeros(2000).to_string() == "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
  // The width comes from the shown elements 0, 1, 2, 998, 999, 1000.
  CHECK(Tensor::arange(1001).to_string() == "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
  CHECK(Tensor::arange(1001, DType::Int32).to_string() ==
        "tensor([   0,    1,    2,  ...,  998,  999, 1000], dtype=torch.int32)");
  // ... and only from them: the hidden 123456 widens nothing.
  Tensor hidden = Tensor::zeros(1001, DType::Int64);
  hidden.set_from_double(500, 123456);
  CHECK(hidden.to_string() == "tensor([0, 0, 0,  ..., 0, 0, 0])");
  // Exactly 1000 elements are all printed.
  const std::string all = Tensor::arange(1000).to_string();
  CHECK(all.find("...") == std::string::npos);
  CHECK(all.starts_with("tensor([  0,   1,   2,"));
  CHECK(all.ends_with(" 999])"));
}

TEST_CASE("summarized elements wrap like any others, the \" ...\" counting as one") {
  // Shown: 0, 0.5, 1, 998.5, 999, 999.5 -> max / min = 1999 -> scientific,
  // width 10, so 73 / 12 = 6 elements per line.
  CHECK((Tensor::arange(2000) * 0.5).to_string() ==
        "tensor([0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 9.9850e+02, 9.9900e+02,\n"
        "        9.9950e+02])");
}

TEST_CASE("long tensors wrap at 80 columns") {
  // Width 2: floor((80 - len("tensor(")) / (2 + 2)) = 18 elements per line.
  CHECK(Tensor::arange(100).to_string() ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
        "        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n"
        "        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n"
        "        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n"
        "        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])");
  // Width 6: 73 / 8 = 9 elements per line.
  CHECK(Tensor::of({0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5}).to_string() ==
        "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000,\n"
        "        9.5000])");
  // Width 20: 73 / 22 = 3 elements per line.
  const i64 lo = std::numeric_limits<i64>::min();
  CHECK(Tensor::of({lo, lo, lo, lo}).to_string() ==
        "tensor([-9223372036854775808, -9223372036854775808, -9223372036854775808,\n"
        "        -9223372036854775808])");
}

TEST_CASE("the dtype suffix moves to its own line when the line would pass 80") {
  // 59 characters + ", dtype=torch.int32)": PyTorch's count (59 + 2) + 17 + 2 = 80 fits.
  CHECK(Tensor::arange(13, DType::Int32).to_string() ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12], dtype=torch.int32)");
  // 63 characters: 65 + 17 + 2 = 84 > 80, so the suffix goes below, indented 7.
  CHECK(Tensor::arange(14, DType::Int32).to_string() ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13],\n"
        "       dtype=torch.int32)");
  CHECK(Tensor::of({0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5}, DType::Float64).to_string() ==
        "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000],\n"
        "       dtype=torch.float64)");
  // After wrapped elements only the last line counts.
  CHECK(Tensor::arange(20, DType::Int32).to_string() ==
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19], dtype=torch.int32)");
}

// ---------------------------------------------------------------------------
// Printing lists

TEST_CASE("a list of tensors prints like Python's list repr") {
  CHECK(ringlab::to_string(std::vector<Tensor>{}) == "[]");
  CHECK(ringlab::to_string({Tensor::of({i64{1}, i64{2}}), Tensor::of({i64{3}, i64{4}})}) ==
        "[tensor([1, 2]), tensor([3, 4])]");
  CHECK(ringlab::to_string({Tensor::scalar(1), Tensor::zeros(0, DType::Int32)}) ==
        "[tensor(1.), tensor([], dtype=torch.int32)]");
}

TEST_CASE("a view works on the memory it is given; copying it makes storage of its own") {
  std::vector<std::int64_t> memory{1, 2, 3};
  Tensor view = Tensor::view(DType::Int64, 3, reinterpret_cast<std::byte*>(memory.data()));
  CHECK(view.is_view());
  CHECK(view.numel() == 3);
  CHECK(view.nbytes() == 24);
  view += 10;  // writes through to the memory
  CHECK(memory == std::vector<std::int64_t>{11, 12, 13});
  memory[0] = 7;
  CHECK(view.item_as_double(0) == 7);

  Tensor copy = view;
  CHECK_FALSE(copy.is_view());
  CHECK(copy.same_values(view));
  copy += 1;
  CHECK(memory == std::vector<std::int64_t>{7, 12, 13});
  CHECK(copy.to_string() == "tensor([ 8, 13, 14])");

  Tensor assigned;
  assigned = view;
  CHECK_FALSE(assigned.is_view());
  Tensor moved = std::move(view);
  CHECK(moved.is_view());
  moved += 1;
  CHECK(memory == std::vector<std::int64_t>{8, 13, 14});

  Tensor empty = Tensor::view(DType::Float32, 0, nullptr);
  CHECK(empty.is_view());
  CHECK(empty.numel() == 0);
  CHECK_THROWS_WITH_AS(Tensor::view(DType::Float32, 2, nullptr), doctest::Contains("needs memory"),
                       std::invalid_argument);
}
