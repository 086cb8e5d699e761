#include "simulator/model_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "primitives/collectives.hpp"
#include "ops/atomic_file.hpp"
#include "ops/read_file.hpp"
#include "simulator/closed_form.hpp"
#include "simulator/forecast.hpp"

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

double rms(const std::vector<double>& relative_errors) {
  if (relative_errors.empty()) return 0;
  double sum = 0;
  for (double e : relative_errors) sum += e * e;
  return std::sqrt(sum / static_cast<double>(relative_errors.size()));
}

bool point_to_point(const Measurement& row) {
  return row.ranks == 2 && (row.op == "sendrecv" || row.op == "pingpong");
}

// Least squares of A x = y for a handful of unknowns (normal equations,
// Gaussian elimination with partial pivoting). Empty if singular.
std::vector<double> least_squares(const std::vector<std::vector<double>>& A,
                                  const std::vector<double>& y) {
  const std::size_t n = A.empty() ? 0 : A.front().size();
  std::vector<std::vector<double>> M(n, std::vector<double>(n + 1, 0.0));
  for (std::size_t r = 0; r < A.size(); ++r)
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) M[i][j] += A[r][i] * A[r][j];
      M[i][n] += A[r][i] * y[r];
    }
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(M[r][c]) > std::abs(M[pivot][c])) pivot = r;
    if (std::abs(M[pivot][c]) < 1e-300) return {};
    std::swap(M[c], M[pivot]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = M[r][c] / M[c][c];
      for (std::size_t k = c; k <= n; ++k) M[r][k] -= f * M[c][k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = M[i][n] / M[i][i];
  return x;
}

// One candidate shape of the model: full or half duplex, a cache term of
// cache_bytes (0: none). Fits alpha and the betas to the 2-rank
// point-to-point rows; returns false if a fitted value is not positive.
bool fit_point_to_point(const std::vector<Measurement>& rows, bool full_duplex,
                        std::uint64_t cache_bytes, CostModel& model) {
  std::vector<std::vector<double>> A;
  std::vector<double> y;
  for (const Measurement& row : rows) {
    if (!point_to_point(row)) continue;
    // A sendrecv moves b each way; half duplex, its rank carries 2b. Its
    // buffer of b bytes is in cache up to cache_bytes.
    const double k = row.op == "sendrecv" && !full_duplex ? 2 : 1;
    const auto b = static_cast<double>(row.bytes);
    std::vector<double> x{1};
    if (cache_bytes > 0) {
      const bool cached = row.bytes <= cache_bytes;
      x.push_back(cached ? k * b : 0);
      x.push_back(cached ? 0 : k * b);
    } else {
      x.push_back(k * b);
    }
    for (double& v : x) v /= row.seconds;  // relative error: each row's weight 1/t^2
    A.push_back(x);
    y.push_back(1);
  }
  const std::vector<double> theta = least_squares(A, y);
  if (theta.empty()) return false;
  for (std::size_t i = 1; i < theta.size(); ++i)
    if (!(theta[i] > 0)) return false;
  model = CostModel{};
  model.alpha_s = std::max(0.0, theta[0]);
  model.full_duplex = full_duplex;
  if (cache_bytes > 0) {
    model.cache_bytes = cache_bytes;
    model.cache_bandwidth_Bps = 1 / theta[1];
    model.bandwidth_Bps = 1 / theta[2];
  } else {
    model.bandwidth_Bps = 1 / theta[1];
  }
  return true;
}

double point_to_point_rms(const std::vector<Measurement>& rows, const CostModel& model) {
  std::vector<double> errors;
  for (const Measurement& row : rows)
    if (point_to_point(row)) errors.push_back(predicted_seconds(row, model) / row.seconds - 1);
  return rms(errors);
}

}  // namespace

double predicted_seconds(const Measurement& row, const CostModel& model) {
  const CostModel run = for_run(model, row.ranks, row.bytes);
  if (row.op == "pingpong" && row.ranks == 2) return port_time(run, 1, row.bytes);
  if (row.op == "sendrecv" && row.ranks == 2)
    return model.full_duplex ? port_time(run, 1, row.bytes)
                             : run.alpha_s + bytes_time(run, 2 * row.bytes);
  if (row.op != "all_reduce")
    throw std::invalid_argument("cannot price " + row.op + " on " + std::to_string(row.ranks) +
                                " ranks");
  // A measured auto ran the measured rule (a ProcessGroup's auto), not the
  // simulator's fastest prediction (forecast.hpp).
  Scenario s = all_reduce_scenario(row);
  if (is_all_reduce_auto(s)) s.algorithm = measured_auto_choice(s, model);
  return forecast(s, model).prediction.total_s;
}

ModelFit fit_cost_model(const std::vector<Measurement>& rows) {
  std::vector<std::size_t> sizes;
  for (const Measurement& row : rows) {
    if (!(row.seconds > 0))
      throw std::invalid_argument("a measured time must be positive (" + row.op + ", " +
                                  std::to_string(row.bytes) + " bytes)");
    if (point_to_point(row) && std::find(sizes.begin(), sizes.end(), row.bytes) == sizes.end())
      sizes.push_back(row.bytes);
  }
  if (sizes.size() < 2)
    throw std::invalid_argument(
        "the fit needs 2-rank sendrecv rows of at least two sizes, to draw a line through them");
  const bool one_way = std::any_of(rows.begin(), rows.end(), [](const Measurement& row) {
    return row.op == "pingpong" && row.ranks == 2;
  });
  ModelFit fit;
  // 1. alpha and beta (and the terms the data asks for): every candidate
  //    shape, fitted; the one with the smallest error wins, a cache term only
  //    if it cuts the error by a fifth (it has one more parameter to fit noise).
  double best = -1;
  auto consider = [&](bool full_duplex, std::uint64_t cache_bytes, double needed) {
    CostModel candidate;
    if (!fit_point_to_point(rows, full_duplex, cache_bytes, candidate)) return;
    const double error = point_to_point_rms(rows, candidate);
    if (best < 0 || error < best * needed) {
      best = error;
      fit.model = candidate;
    }
  };
  // Without one-way rows, sendrecv alone cannot tell half from full duplex.
  for (bool full_duplex : {true, false}) {
    if (!full_duplex && !one_way) continue;
    consider(full_duplex, 0, 1.0);
  }
  const bool duplex = fit.model.full_duplex;
  for (std::uint64_t cache = 64 << 10; cache <= (8u << 20); cache *= 2)
    consider(duplex, cache, 0.8);
  if (best < 0) throw std::invalid_argument("the point-to-point times do not grow with size");

  // 2. gamma: t = A + gamma B, minimising sum ((A + gamma B - t) / t)^2; A is
  //    the prediction without reductions, B the bytes reduced on the
  //    critical path (the prediction at 1 s a byte with no communication).
  CostModel reduce_only;
  reduce_only.alpha_s = 0;
  reduce_only.bandwidth_Bps = 1e300;
  reduce_only.gamma_s_per_byte = 1;
  double num = 0, den = 0;
  for (const Measurement& row : rows) {
    if (row.op != "all_reduce" || row.ranks != 2) continue;
    const double A = predicted_seconds(row, fit.model);
    const double B = predicted_seconds(row, reduce_only);
    num += (B / row.seconds) * (row.seconds - A) / row.seconds;
    den += (B / row.seconds) * (B / row.seconds);
    ++fit.all_reduce_rows;
  }
  if (den > 0) fit.model.gamma_s_per_byte = std::max(0.0, num / den);

  std::vector<double> p2p_errors, all_reduce_errors;
  for (const Measurement& row : rows) {
    if (row.ranks != 2) continue;
    const double e = predicted_seconds(row, fit.model) / row.seconds - 1;
    if (point_to_point(row)) {
      p2p_errors.push_back(e);
      ++fit.sendrecv_rows;
    } else if (row.op == "all_reduce") {
      all_reduce_errors.push_back(e);
    }
  }
  fit.sendrecv_rms = rms(p2p_errors);
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
  j["full_duplex"] = model.full_duplex;
  j["cache_bytes"] = model.cache_bytes;
  j["cache_bandwidth_Bps"] = model.cache_bandwidth_Bps;
  j["cores"] = model.cores;
  j["note"] = note;
  write_file_atomically(path, "cost model file",
                        [&](std::ostream& out) { out << j.dump(2) << '\n'; });
}

CostModel load_cost_model(const std::string& path) {
  std::string text;
  try {  // a regular file only, of at most 1 MiB: never a FIFO or /dev/zero
    text = read_regular_file(path, "cost model file", std::size_t{1} << 20);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(std::string(error.what()) +
                             " (make one with `ringlab sim --calibrate --save " + path + "`)");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
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
  // Terms a calibration adds only where the machine needs them.
  if (j.contains("full_duplex")) {
    if (!j["full_duplex"].is_boolean()) fail("\"full_duplex\" is not true or false");
    model.full_duplex = j["full_duplex"].get<bool>();
  }
  if (j.contains("cache_bytes")) {
    const double cache = number("cache_bytes", false);
    if (cache > 0) {
      model.cache_bytes = static_cast<std::uint64_t>(cache);
      model.cache_bandwidth_Bps = number("cache_bandwidth_Bps", true);
    }
  }
  if (j.contains("cores")) model.cores = static_cast<int>(number("cores", false));
  return model;
}

}  // namespace ringlab::sim
