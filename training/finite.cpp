#include "training/finite.hpp"

#include <cmath>
#include <sstream>

namespace ringlab::training {

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

std::optional<std::size_t> first_non_finite(std::span<const float> values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i])) return i;
  return std::nullopt;
}

void check_step(const StepPlace& where, float loss, const std::vector<NamedParameter>& params) {
  std::string first;
  int others = 0;
  for (const NamedParameter& p : params) {
    const auto i = first_non_finite(p.parameter->value.values());
    if (!i) continue;
    if (first.empty())
      first = "element " + std::to_string(*i) + " of " + p.name + " is " +
              number_text(p.parameter->value[*i]) + " after the step";
    else
      ++others;
  }
  if (first.empty() && std::isfinite(loss)) return;
  std::string why = first.empty() ? "the loss is " + number_text(loss) : first;
  std::string details;
  if (others > 0)
    details = "and " + std::to_string(others) + " other parameter" +
              (others == 1 ? " is" : "s are") + " not finite; ";
  if (!first.empty()) details += "the loss was " + number_text(loss) + ", ";
  details += "lr " + number_text(where.lr);
  throw DivergedError("rank " + std::to_string(where.rank) + ", " + where.step +
                      ": training diverged: " + why + " (" + details +
                      "): training stops here and saves nothing, so the last checkpoint stays "
                      "as it was; train again with a smaller learning rate");
}

}  // namespace ringlab::training
