#include "simulator/model_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "primitives/collectives.hpp"
#include "simulator/atomic_file.hpp"
#include "simulator/closed_form.hpp"

namespace ringlab::sim {

namespace {

constexpr const char* kFormat = "ringlab cost model";

Scenario all_reduce_scenario(const Measurement& row) {
  Scenario s;
  s.collective = Collective::AllReduce;
  s.algorithm = row.algorithm;
  s.ranks = row.ranks;
  s.count = row.bytes / element_size(DType::Float32);
  s.dtype = DType::Float32;
  s.values = ValueMode::Off;
  return s;
}

double all_reduce_seconds(const Measurement& row, const CostModel& model) {
  std::string why;
  const auto schedule = closed_form(all_reduce_scenario(row), &why);
  if (!schedule) throw std::invalid_argument("cannot price " + row.algorithm + ": " + why);
  return predict(*schedule, model).total_s;
}

double rms(const std::vector<double>& relative_errors) {
  if (relative_errors.empty()) return 0;
  double sum = 0;
  for (double e : relative_errors) sum += e * e;
  return std::sqrt(sum / static_cast<double>(relative_errors.size()));
}

}  // namespace

double predicted_seconds(const Measurement& row, const CostModel& model) {
  if (row.op == "sendrecv") return port_time(model, 1, row.bytes);
  return all_reduce_seconds(row, model);
}

ModelFit fit_cost_model(const std::vector<Measurement>& rows) {
  for (const Measurement& row : rows)
    if (!(row.seconds > 0))
      throw std::invalid_argument("a measured time must be positive (" + row.op + ", " +
                                  std::to_string(row.bytes) + " bytes)");
  ModelFit fit;
  // 1. alpha, beta: minimise sum ((alpha + b beta - t) / t)^2, i.e. ordinary
  //    least squares on rows (1/t, b/t) -> 1 (the normal equations, 2x2).
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  std::vector<std::size_t> sizes;
  for (const Measurement& row : rows) {
    if (row.op != "sendrecv" || row.ranks != 2) continue;
    const double x1 = 1 / row.seconds, x2 = static_cast<double>(row.bytes) / row.seconds;
    s11 += x1 * x1;
    s12 += x1 * x2;
    s22 += x2 * x2;
    r1 += x1;
    r2 += x2;
    ++fit.sendrecv_rows;
    if (std::find(sizes.begin(), sizes.end(), row.bytes) == sizes.end()) sizes.push_back(row.bytes);
  }
  if (sizes.size() < 2)
    throw std::invalid_argument(
        "the fit needs 2-rank sendrecv rows of at least two sizes, to draw a line through them");
  const double det = s11 * s22 - s12 * s12;
  double alpha = (r1 * s22 - r2 * s12) / det;
  double beta = (s11 * r2 - s12 * r1) / det;
  if (!(beta > 0)) {
    // The times do not grow with size (noise at small sizes only): keep the
    // slope of the two extremes.
    const Measurement* lo = nullptr;
    const Measurement* hi = nullptr;
    for (const Measurement& row : rows) {
      if (row.op != "sendrecv" || row.ranks != 2) continue;
      if (!lo || row.bytes < lo->bytes) lo = &row;
      if (!hi || row.bytes > hi->bytes) hi = &row;
    }
    beta =
        std::max(1e-15, (hi->seconds - lo->seconds) / static_cast<double>(hi->bytes - lo->bytes));
    alpha = lo->seconds - static_cast<double>(lo->bytes) * beta;
  }
  fit.model.alpha_s = std::max(0.0, alpha);
  fit.model.bandwidth_Bps = 1 / beta;
  fit.model.gamma_s_per_byte = 0;

  // 2. gamma: t = A + gamma B, minimising sum ((A + gamma B - t) / t)^2.
  CostModel reduce_only;  // prices only the reductions, at 1 s per byte
  reduce_only.alpha_s = 0;
  reduce_only.bandwidth_Bps = 1e300;
  reduce_only.gamma_s_per_byte = 1;
  double num = 0, den = 0;
  for (const Measurement& row : rows) {
    if (row.op != "all_reduce" || row.ranks != 2) continue;
    const double A = all_reduce_seconds(row, fit.model);
    const double B = all_reduce_seconds(row, reduce_only);
    num += (B / row.seconds) * (row.seconds - A) / row.seconds;
    den += (B / row.seconds) * (B / row.seconds);
    ++fit.all_reduce_rows;
  }
  if (den > 0) fit.model.gamma_s_per_byte = std::max(0.0, num / den);

  std::vector<double> sendrecv_errors, all_reduce_errors;
  for (const Measurement& row : rows) {
    if (row.ranks != 2) continue;
    const double e = predicted_seconds(row, fit.model) / row.seconds - 1;
    (row.op == "sendrecv" ? sendrecv_errors : all_reduce_errors).push_back(e);
  }
  fit.sendrecv_rms = rms(sendrecv_errors);
  fit.all_reduce_rms = rms(all_reduce_errors);
  return fit;
}

void save_cost_model(const std::string& path, const CostModel& model, const std::string& note) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = 1;
  j["alpha_s"] = model.alpha_s;
  j["bandwidth_Bps"] = model.bandwidth_Bps;
  j["gamma_s_per_byte"] = model.gamma_s_per_byte;
  j["note"] = note;
  write_file_atomically(path, "cost model file",
                        [&](std::ostream& out) { out << j.dump(2) << '\n'; });
}

CostModel load_cost_model(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read the cost model file '" + path +
                             "' (make one with `ringlab sim --calibrate --save " + path + "`)");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error("'" + path + "' is not JSON: " + error.what());
  }
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("'" + path + "' is not a ringlab cost model: " + why);
  };
  if (!j.is_object() || j.value("format", "") != kFormat)
    fail("its \"format\" is not \"" + std::string(kFormat) + "\"");
  if (j.value("version", 0) != 1)
    fail("version " + j.value("version", nlohmann::json()).dump() + " (this ringlab reads 1)");
  auto number = [&](const char* key, bool positive) {
    if (!j.contains(key) || !j[key].is_number())
      fail(std::string("\"") + key + "\" is missing or not a number");
    const double v = j[key].get<double>();
    if (!std::isfinite(v) || v < 0 || (positive && v == 0))
      fail(std::string("\"") + key + "\" is " + j[key].dump() + ", not a " +
           (positive ? "positive" : "non-negative") + " number");
    return v;
  };
  CostModel model;
  model.alpha_s = number("alpha_s", false);
  model.bandwidth_Bps = number("bandwidth_Bps", true);
  model.gamma_s_per_byte = number("gamma_s_per_byte", false);
  return model;
}

}  // namespace ringlab::sim
