// PyTorch-compatible printing of a Tensor. This mirrors torch/_tensor_str.py
// (_Formatter, _vector_str, _add_suffixes, get_summarized_data) step by step
// for 0-D and 1-D tensors with PyTorch's default print options, so that a
// lesson's output reads exactly like the articles' PyTorch printouts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/tensor.hpp"

namespace ringlab {

namespace {

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
  // Integer and bool dtypes: "{}".format(value), so 5 and True, False;
  // every element padded to the widest.
  static Formatter for_text(std::span<const std::string> values) {
    Formatter f(Style::Integer);
    for (const std::string& v : values) f.width_ = std::max(f.width_, v.size());
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

  std::string format(const std::string& v) const { return pad_left(v, width_); }

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

// Python's "{}".format(value) of an integer or bool element; float
// elements as the double Python would see (a float16's exact value).
template <typename T>
auto shown_value(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return std::string(v ? "True" : "False");
  } else if constexpr (is_integer_type_v<T>) {
    // From the exact value: an int64 may not survive a trip through double.
    return std::to_string(static_cast<std::int64_t>(v));
  } else {
    return static_cast<double>(v);
  }
}

FormattedElements format_elements(const Tensor& t, const ShownElements& shown) {
  return visit_dtype(t.dtype(), [&]<typename T>() {
    const std::byte* data = t.bytes().data();
    using Value = decltype(shown_value(T{}));
    std::vector<Value> head;
    std::vector<Value> tail;
    for (std::size_t i : shown.head) head.push_back(shown_value(load_element<T>(data, i)));
    for (std::size_t i : shown.tail) tail.push_back(shown_value(load_element<T>(data, i)));

    // The formatter sees only the shown elements, as in PyTorch.
    std::vector<Value> all = head;
    all.insert(all.end(), tail.begin(), tail.end());
    const Formatter f = [&] {
      if constexpr (std::is_same_v<Value, std::string>)
        return Formatter::for_text(all);
      else
        return Formatter::for_floats(all);
    }();
    FormattedElements out;
    out.width = f.width();
    for (const Value& v : head) out.text.push_back(f.format(v));
    if (shown.elided) out.text.push_back(" ...");
    for (const Value& v : tail) out.text.push_back(f.format(v));
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
    // int64, float32 and bool are the dtypes PyTorch infers from Python's
    // numbers, so they go unnamed (torch._tensor_str's has_default_dtype).
    if (dtype_ != DType::Int64 && dtype_ != DType::Float32 && dtype_ != DType::Bool) {
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