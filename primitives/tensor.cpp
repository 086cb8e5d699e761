// Tensor storage, element access, scalar arithmetic and PyTorch-compatible
// printing. The printing code mirrors torch/_tensor_str.py (_Formatter,
// _vector_str, _add_suffixes, get_summarized_data) step by step for 0-D and
// 1-D tensors with PyTorch's default print options, so that a lesson's output
// reads exactly like the articles' PyTorch printouts.
#include "primitives/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace ringlab {

// ---------------------------------------------------------------------------
// dtype names

DType parse_dtype(std::string_view name) {
  std::string_view bare = name;
  if (bare.starts_with("torch.")) bare.remove_prefix(6);
  if (bare == "int32" || bare == "int") return DType::Int32;
  if (bare == "int64" || bare == "long") return DType::Int64;
  if (bare == "float32" || bare == "float") return DType::Float32;
  if (bare == "float64" || bare == "double") return DType::Float64;
  throw std::invalid_argument("unknown dtype '" + std::string(name) +
                              "'; valid dtypes: int32 (int), int64 (long), float32 (float), "
                              "float64 (double), optionally written with a 'torch.' prefix");
}

namespace {

std::string torch_dtype(DType d) { return "torch." + std::string(dtype_name(d)); }

// Converts v to the integer type T the way PyTorch stores a Python float into
// an integer tensor (truncation toward zero). Values that do not fit are
// rejected instead of invoking undefined behaviour.
template <typename T>
T checked_integer(double v) {
  const double t = std::trunc(v);
  // -min is 2^(bits-1), exactly representable, so [min, -min) is the range.
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  if (!(t >= lo && t < -lo)) {
    throw std::invalid_argument("value " + std::to_string(v) + " does not fit in a " +
                                torch_dtype(dtype_of<T>()) + " tensor");
  }
  return static_cast<T>(t);
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    return checked_integer<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// Integer arithmetic wraps around on overflow like PyTorch's; going through the
// unsigned type keeps that well defined in C++.
template <typename T>
T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

// Our API takes every scalar as a double, so "an int scalar" (which keeps an
// integer tensor's dtype in PyTorch) is taken to mean "an integral value".
bool is_integral_value(double v) { return std::isfinite(v) && std::trunc(v) == v; }

enum class ScalarOp { Add, Mul };

// A copy of t with its elements converted to dtype (static_cast, as .to()).
Tensor converted(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out(dtype, t.shape());
  visit_dtype(t.dtype(), [&]<typename From>() {
    visit_dtype(dtype, [&]<typename To>() {
      const auto src = t.data<From>();
      const auto dst = out.data<To>();
      for (std::size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<To>(src[i]);
    });
  });
  return out;
}

// t OP v, computed in the result type like PyTorch's CPU kernels (the scalar
// is first converted to the result type).
Tensor apply_scalar(const Tensor& t, double v, ScalarOp op) {
  // Type promotion: an integer tensor with a non-integral scalar gives the
  // default float dtype (torch.tensor([1, 2]) * 1.5 is float32).
  const bool promote = !is_floating(t.dtype()) && !is_integral_value(v);
  Tensor out = converted(t, promote ? DType::Float32 : t.dtype());
  visit_dtype(out.dtype(), [&]<typename T>() {
    const T s = from_double<T>(v);
    for (T& x : out.data<T>()) {
      if constexpr (std::is_integral_v<T>) {
        x = op == ScalarOp::Add ? wrapping_add(x, s) : wrapping_mul(x, s);
      } else {
        x = op == ScalarOp::Add ? x + s : x * s;
      }
    }
  });
  return out;
}

// ---------------------------------------------------------------------------
// Printing: torch._tensor_str with the default PRINT_OPTS.

constexpr int kPrecision = 4;
constexpr std::size_t kThreshold = 1000;  // more elements than this: summarize
constexpr std::size_t kEdgeItems = 3;     // elements kept at each end when summarizing
constexpr std::size_t kLineWidth = 80;

enum class Notation { Fixed, Scientific };

// Python's "{:.Nf}" / "{:.Ne}" of one double. printf rounds the same way
// (correctly, ties to even); only the non-finite values need care, because
// Python never prints a sign on nan ("nan", where printf may give "-nan").
std::string format_double(double v, Notation notation, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[512];  // "%.4f" of the largest double is about 315 characters
  if (notation == Notation::Fixed) {
    std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*e", precision, v);
  }
  return buf;
}

std::string pad_left(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// torch._tensor_str._Formatter: chooses one style and one width for every
// element of a tensor from the values that will be shown.
class Formatter {
 public:
  static Formatter for_integers(std::span<const std::int64_t> values) {
    Formatter f(Style::Integer);
    for (std::int64_t v : values) f.width_ = std::max(f.width_, std::to_string(v).size());
    return f;
  }

  static Formatter for_floats(std::span<const double> values) {
    // Only nonzero finite values decide the style; zeros, nan and inf do not.
    std::vector<double> nonzero_finite;
    for (double v : values) {
      if (std::isfinite(v) && v != 0) nonzero_finite.push_back(v);
    }
    Formatter f(Style::IntegralFloat);
    if (nonzero_finite.empty()) return f;  // e.g. all zeros: "0.", width 1

    double min_abs = std::abs(nonzero_finite.front());
    double max_abs = min_abs;
    bool all_integral = true;
    for (double v : nonzero_finite) {
      min_abs = std::min(min_abs, std::abs(v));
      max_abs = std::max(max_abs, std::abs(v));
      if (v != std::ceil(v)) all_integral = false;
    }

    // Integral values only go scientific for a large range or large values;
    // fractional ones also when some value is tiny.
    const bool wide_range = max_abs / min_abs > 1000.0 || max_abs > 1.0e8;
    if (wide_range || (!all_integral && min_abs < 1.0e-4)) {
      f.style_ = Style::Scientific;
    } else if (!all_integral) {
      f.style_ = Style::Fixed;
    }
    // The width covers the nonzero finite values only; a wider "nan" or
    // "-inf" simply sticks out (tensor([1., nan])).
    for (double v : nonzero_finite) f.width_ = std::max(f.width_, f.render(v).size());
    return f;
  }

  std::size_t width() const { return width_; }

  std::string format(std::int64_t v) const { return pad_left(std::to_string(v), width_); }

  std::string format(double v) const { return pad_left(render(v), width_); }

 private:
  enum class Style {
    Integer,        // integer dtypes: 5
    IntegralFloat,  // float dtypes whose values are all integral: 5.
    Fixed,          // 0.5000
    Scientific,     // 1.0000e-05
  };

  explicit Formatter(Style style) : style_(style) {}

  // One float value in the chosen style, before padding.
  std::string render(double v) const {
    switch (style_) {
      case Style::Scientific:
        return format_double(v, Notation::Scientific, kPrecision);
      case Style::Fixed:
        return format_double(v, Notation::Fixed, kPrecision);
      case Style::IntegralFloat:
      case Style::Integer:
        break;
    }
    std::string s = format_double(v, Notation::Fixed, 0);
    if (std::isfinite(v)) s += '.';  // nan and inf get no decimal point
    return s;
  }

  Style style_;
  std::size_t width_ = 1;
};

// The elements a 1-D tensor shows: all of them, or the first and last
// kEdgeItems when summarizing (torch._tensor_str.get_summarized_data).
struct ShownElements {
  std::vector<std::size_t> head;
  std::vector<std::size_t> tail;  // after the " ..." marker; empty when not summarized
  bool elided = false;
};

ShownElements shown_elements(std::size_t n) {
  ShownElements shown;
  // Summarizing needs more than kThreshold elements in the whole tensor and
  // more than 2 * kEdgeItems in this dimension; for a 1-D tensor the first
  // condition implies the second.
  if (n > kThreshold && n > 2 * kEdgeItems) {
    shown.elided = true;
    for (std::size_t i = 0; i < kEdgeItems; ++i) shown.head.push_back(i);
    for (std::size_t i = n - kEdgeItems; i < n; ++i) shown.tail.push_back(i);
  } else {
    for (std::size_t i = 0; i < n; ++i) shown.head.push_back(i);
  }
  return shown;
}

// The text of the shown elements of a tensor (one string for a 0-D tensor),
// with the " ..." marker where elements were left out, and the formatter's
// width, which decides the line wrapping.
struct FormattedElements {
  std::vector<std::string> text;
  std::size_t width = 1;
};

FormattedElements format_elements(const Tensor& t, const ShownElements& shown) {
  return visit_dtype(t.dtype(), [&]<typename T>() {
    const auto data = t.data<T>();
    // Integers are formatted from their exact values (an int64 may not
    // survive a trip through double), floats as the double Python would see.
    using Value = std::conditional_t<std::is_integral_v<T>, std::int64_t, double>;
    std::vector<Value> head;
    std::vector<Value> tail;
    for (std::size_t i : shown.head) head.push_back(static_cast<Value>(data[i]));
    for (std::size_t i : shown.tail) tail.push_back(static_cast<Value>(data[i]));

    // The formatter sees only the shown elements, as in PyTorch.
    std::vector<Value> all = head;
    all.insert(all.end(), tail.begin(), tail.end());
    const Formatter f = [&] {
      if constexpr (std::is_integral_v<T>)
        return Formatter::for_integers(all);
      else
        return Formatter::for_floats(all);
    }();
    FormattedElements out;
    out.width = f.width();
    for (Value v : head) out.text.push_back(f.format(v));
    if (shown.elided) out.text.push_back(" ...");
    for (Value v : tail) out.text.push_back(f.format(v));
    return out;
  });
}

// torch._tensor_str._vector_str: elements separated by ", ", as many per line
// as fit in the line width after the indent, continuation lines indented to
// just after the "[".
std::string vector_str(const FormattedElements& elements, std::size_t indent) {
  const std::size_t element_length = elements.width + 2;  // the element and its ", "
  const std::size_t available = kLineWidth > indent ? kLineWidth - indent : 0;
  const std::size_t per_line = std::max<std::size_t>(1, available / element_length);

  std::string out = "[";
  for (std::size_t i = 0; i < elements.text.size(); ++i) {
    if (i > 0) {
      out += i % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
    }
    out += elements.text[i];
  }
  return out + "]";
}

// torch._tensor_str._add_suffixes: ", dtype=..." goes on the same line unless
// that line would exceed the line width, then on a new line at the indent.
std::string add_suffixes(std::string text, const std::vector<std::string>& suffixes,
                         std::size_t indent) {
  // PyTorch computes len(s) - s.rfind("\n") + 1 (rfind gives -1 when there is
  // no newline); this over-counts the last line by two, and we must too.
  const std::size_t newline = text.rfind('\n');
  std::size_t last_line_len =
      newline == std::string::npos ? text.size() + 2 : text.size() - newline + 1;
  for (const std::string& suffix : suffixes) {
    if (last_line_len + suffix.size() + 2 > kLineWidth) {
      text += ",\n" + std::string(indent, ' ') + suffix;
      last_line_len = indent + suffix.size();
    } else {
      text += ", " + suffix;
      last_line_len += suffix.size() + 2;
    }
  }
  return text + ")";
}

}  // namespace

// ---------------------------------------------------------------------------
// Construction

Tensor::Tensor(DType dtype, std::vector<std::int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  if (shape_.size() > 1) {
    throw std::invalid_argument("Tensor supports 0-D and 1-D shapes only, got " +
                                std::to_string(shape_.size()) + " dimensions");
  }
  for (std::int64_t size : shape_) {
    if (size < 0) {
      throw std::invalid_argument("Tensor size must be non-negative, got " + std::to_string(size));
    }
  }
  storage_.assign(numel() * element_size(dtype_), std::byte{0});
}

Tensor Tensor::zeros(std::int64_t n, DType dtype) { return Tensor(dtype, {n}); }

Tensor Tensor::scalar(double value, DType dtype) {
  Tensor t(dtype, {});
  t.set_from_double(0, value);
  return t;
}

Tensor Tensor::arange(std::int64_t n, DType dtype) {
  Tensor t(dtype, {n});
  for (std::size_t i = 0; i < t.numel(); ++i) t.set_from_double(i, static_cast<double>(i));
  return t;
}

Tensor Tensor::of(std::initializer_list<std::int64_t> values) {
  return from(std::span<const std::int64_t>(values.begin(), values.size()));
}

Tensor Tensor::of(std::initializer_list<int> values) {
  Tensor t(DType::Int64, {static_cast<std::int64_t>(values.size())});
  std::size_t i = 0;
  for (int v : values) t.data<std::int64_t>()[i++] = v;
  return t;
}

Tensor Tensor::of(std::initializer_list<double> values, DType dtype) {
  Tensor t(dtype, {static_cast<std::int64_t>(values.size())});
  std::size_t i = 0;
  for (double v : values) t.set_from_double(i++, v);
  return t;
}

// ---------------------------------------------------------------------------
// Element access

std::size_t Tensor::numel() const {
  std::size_t n = 1;  // a 0-D tensor holds one element
  for (std::int64_t size : shape_) n *= static_cast<std::size_t>(size);
  return n;
}

void Tensor::check_type(DType requested) const {
  if (requested != dtype_) {
    throw std::invalid_argument("Tensor::data<" + std::string(dtype_name(requested)) +
                                ">() called on a tensor of dtype " + torch_dtype(dtype_));
  }
}

namespace {
void check_element_index(std::size_t i, std::size_t numel) {
  if (i >= numel) {
    throw std::out_of_range("element index " + std::to_string(i) +
                            " is out of range for a tensor with " + std::to_string(numel) +
                            " elements");
  }
}
}  // namespace

double Tensor::item_as_double(std::size_t i) const {
  check_element_index(i, numel());
  return visit_dtype(dtype_, [&]<typename T>() { return static_cast<double>(data<T>()[i]); });
}

void Tensor::set_from_double(std::size_t i, double v) {
  check_element_index(i, numel());
  visit_dtype(dtype_, [&]<typename T>() { data<T>()[i] = from_double<T>(v); });
}

Tensor Tensor::operator[](std::int64_t i) const {
  if (dim() == 0) {
    throw std::invalid_argument("invalid index of a 0-dim tensor; use item_as_double() instead");
  }
  const std::int64_t size = shape_[0];
  if (i < -size || i >= size) {
    throw std::out_of_range("index " + std::to_string(i) +
                            " is out of bounds for dimension 0 with size " + std::to_string(size));
  }
  const std::size_t index = static_cast<std::size_t>(i < 0 ? i + size : i);  // Python's t[-1]
  Tensor element(dtype_, {});
  const std::size_t esize = element_size(dtype_);
  std::copy_n(storage_.begin() + static_cast<std::ptrdiff_t>(index * esize), esize,
              element.storage_.begin());
  return element;
}

bool Tensor::same_values(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ && storage_ == other.storage_;
}

// ---------------------------------------------------------------------------
// Arithmetic

Tensor& Tensor::operator+=(double v) {
  // In place the dtype cannot change, so PyTorch refuses what would promote.
  if (!is_floating(dtype_) && !is_integral_value(v)) {
    throw std::invalid_argument("result type Float can't be cast to the desired output type " +
                                torch_dtype(dtype_) + " (adding " + std::to_string(v) +
                                " in place to an integer tensor)");
  }
  *this = apply_scalar(*this, v, ScalarOp::Add);
  return *this;
}

Tensor Tensor::operator+(double v) const { return apply_scalar(*this, v, ScalarOp::Add); }

Tensor Tensor::operator*(double v) const { return apply_scalar(*this, v, ScalarOp::Mul); }

// ---------------------------------------------------------------------------
// Printing

std::string Tensor::to_string() const {
  const std::string prefix = "tensor(";
  const std::size_t indent = prefix.size();
  std::vector<std::string> suffixes;
  std::string body;

  if (numel() == 0) {
    // With no elements to show, every dtype but the default float one is
    // named. (PyTorch also adds "size=" for shapes other than (0,); an empty
    // tensor here is always 1-D.)
    if (dtype_ != DType::Float32) suffixes.push_back("dtype=" + torch_dtype(dtype_));
    body = "[]";
  } else {
    // int64 and float32 are the dtypes PyTorch infers, so they go unnamed.
    if (dtype_ != DType::Int64 && dtype_ != DType::Float32) {
      suffixes.push_back("dtype=" + torch_dtype(dtype_));
    }
    if (dim() == 0) {
      body = format_elements(*this, ShownElements{{0}, {}, false}).text.front();
    } else {
      body = vector_str(format_elements(*this, shown_elements(numel())), indent);
    }
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

std::string to_string(const std::vector<Tensor>& tensors) {
  std::string out = "[";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0) out += ", ";
    out += tensors[i].to_string();
  }
  return out + "]";
}

}  // namespace ringlab
