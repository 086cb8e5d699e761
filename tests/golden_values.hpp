// Reading tests/golden/make_dtype_golden.py's files: values written as text
// (integers in decimal, floats as Python's float.hex(), bools as True/False)
// made into ringlab Tensors, and compared element for element.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/tensor.hpp"

namespace golden {

inline nlohmann::json read_json(const std::string& file) {
  const std::string path = std::string(RINGLAB_GOLDEN_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + ": run tests/golden/make_dtype_golden.py");
  return nlohmann::json::parse(in);
}

// One element's text as the double it stands for (exact: every value of
// every dtype but the widest integers is a double; those are not read here).
inline double number(const std::string& text) {
  if (text == "True") return 1;
  if (text == "False") return 0;
  return std::strtod(text.c_str(), nullptr);  // decimal, hex floats, nan, inf
}

// dtype_print.json's values: a run of equal values is [text, count].
inline std::vector<std::string> expand_runs(const nlohmann::json& values) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    if (v.is_string()) out.push_back(v.get<std::string>());
    else out.insert(out.end(), v[1].get<std::size_t>(), v[0].get<std::string>());
  }
  return out;
}

// A tensor of dtype holding the values; shape (n) or, with dim 0, ().
inline ringlab::Tensor tensor(ringlab::DType dtype, const std::vector<std::string>& texts,
                              int dim = 1) {
  std::vector<std::int64_t> shape;
  if (dim == 1) shape.push_back(static_cast<std::int64_t>(texts.size()));
  ringlab::Tensor t(dtype, shape);
  ringlab::visit_dtype(dtype, [&]<typename T>() {
    auto data = t.data<T>();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if constexpr (ringlab::is_integer_type_v<T>)
        data[i] = static_cast<T>(std::stoll(texts[i]));  // exact, int64's extremes too
      else
        data[i] = static_cast<T>(number(texts[i]));  // exactly representable in T
    }
  });
  return t;
}

// Element i of t as golden text would write it, for messages and comparison:
// integers exactly, floats as %a (nan compares equal to nan here).
inline std::string text_of(const ringlab::Tensor& t, std::size_t i) {
  return ringlab::visit_dtype(t.dtype(), [&]<typename T>() -> std::string {
    const T v = ringlab::load_element<T>(t.bytes().data(), i);
    if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
    else if constexpr (ringlab::is_integer_type_v<T>) return std::to_string(static_cast<std::int64_t>(v));
    else {
      const double d = static_cast<double>(v);
      if (std::isnan(d)) return "nan";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%a", d);
      return buf;
    }
  });
}

// The elements of t, or of the golden texts, in text_of's form.
inline std::vector<std::string> texts_of(const ringlab::Tensor& t) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < t.numel(); ++i) out.push_back(text_of(t, i));
  return out;
}
inline std::vector<std::string> normalized(ringlab::DType dtype,
                                           const std::vector<std::string>& texts) {
  return texts_of(tensor(dtype, texts));
}

}  // namespace golden
