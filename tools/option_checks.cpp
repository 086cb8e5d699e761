#include "tools/option_checks.hpp"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "ops/atomic_file.hpp"

namespace ringlab::cli {

namespace {

// The number CLI11 would store (it reads with strtold and converts), or
// nothing when the text is not a number at all.
std::optional<double> as_cli11_reads(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long double value = std::strtold(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return static_cast<double>(value);
}

// 1000, 0.5, 4000000000, 1e-09: as a person would write the bound.
std::string bound_text(double v) {
  std::ostringstream out;
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    out << static_cast<long long>(v);
  else
    out << v;
  return out.str();
}

// Only what reads as NaN or an infinity: text that is no number at all is
// left to the option's own check, or to CLI11's conversion.
std::string finite_error(const std::string& input) {
  const std::optional<double> value = as_cli11_reads(input);
  if (!value) return {};
  if (std::isnan(*value)) return input + " is not allowed: give a finite number, not NaN";
  if (std::isinf(*value))
    return input + " is not allowed: give a finite number" +
           (input.find_first_of("iI") == std::string::npos
                ? " (" + input + " is past the largest double)"
                : std::string());
  return {};
}

}  // namespace

CLI::Validator finite_number() {
  return CLI::Validator([](std::string& input) { return finite_error(input); }, "");
}

CLI::Validator real_number(double min, double max, const std::string& what) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        const std::optional<double> value = as_cli11_reads(input);
        if (value && *value >= min && *value <= max) return {};  // false for NaN
        return input + " is not allowed: give " + what + " from " + bound_text(min) + " to " +
               bound_text(max);
      },
      bound_text(min) + ".." + bound_text(max));
}

CLI::Validator positive_number(double max, const std::string& what) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        const std::optional<double> value = as_cli11_reads(input);
        if (value && *value > 0 && *value <= max) return {};  // false for NaN
        return input + " is not allowed: give " + what + " above 0, at most " + bound_text(max);
      },
      "(0.." + bound_text(max) + "]");
}

CLI::Validator file_to_write(const std::string& what) {
  return CLI::Validator(
      [what](std::string& input) -> std::string {
        try {
          check_file_destination(input, what);
        } catch (const std::runtime_error& e) {
          return e.what();
        }
        return {};
      },
      "");
}

void refuse_non_finite_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options())
    if (option->get_type_name().starts_with("FLOAT")) option->transform(finite_number());
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    refuse_non_finite_numbers(*sub);
}

}  // namespace ringlab::cli
