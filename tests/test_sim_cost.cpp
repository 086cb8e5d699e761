// The cost model against the closed forms (n bytes, P ranks, equal blocks),
// and the calibrated model's fit and file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "simulator/closed_form.hpp"
#include "simulator/cost.hpp"
#include "simulator/forecast.hpp"
#include "simulator/model_file.hpp"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

Run record(Collective c, const char* algorithm, int P, std::size_t count) {
  Scenario s;
  s.collective = c;
  s.algorithm = algorithm;
  s.ranks = P;
  s.count = count;
  s.values = ValueMode::Off;
  return simulate(s);
}

CostModel model(double alpha, double bandwidth, double gamma) {
  CostModel m;
  m.alpha_s = alpha;
  m.bandwidth_Bps = bandwidth;
  m.gamma_s_per_byte = gamma;
  return m;
}

// Not round numbers, so a swapped term shows.
const double kAlpha = 3e-6, kBandwidth = 7e9, kBeta = 1 / 7e9, kGamma = 0.4e-9;

}  // namespace

TEST_CASE("ring all_reduce: 2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma") {
  for (int P : {2, 3, 4, 8, 16}) {
    CAPTURE(P);
    const std::size_t count = static_cast<std::size_t>(P) * 1000;
    const double n = static_cast<double>(count * 4);
    const Prediction p = predict(record(Collective::AllReduce, "ring", P, count), model(kAlpha, kBandwidth, kGamma));
    const double expected = 2 * (P - 1) * kAlpha + 2.0 * (P - 1) / P * n * kBeta + (P - 1.0) / P * n * kGamma;
    CHECK(p.total_s == doctest::Approx(expected).epsilon(1e-12));
    CHECK(p.size_bytes == count * 4);
    CHECK(p.algbw_GBps == doctest::Approx(n / expected / 1e9));
    CHECK(p.busbw_GBps == doctest::Approx(n / expected / 1e9 * 2 * (P - 1) / P));
  }
}

TEST_CASE("recursive doubling: log2 P (alpha + n beta + n gamma)") {
  for (int P : {2, 4, 8, 32}) {
    CAPTURE(P);
    const std::size_t count = 3000;
    const double n = static_cast<double>(count * 4);
    const double L = std::log2(P);
    const Prediction p = predict(record(Collective::AllReduce, "recursive_doubling", P, count),
                                 model(kAlpha, kBandwidth, kGamma));
    CHECK(p.total_s == doctest::Approx(L * (kAlpha + n * kBeta + n * kGamma)).epsilon(1e-12));
  }
}

TEST_CASE("rabenseifner: 2 log2 P alpha + 2(P-1)/P n beta + (P-1)/P n gamma") {
  for (int P : {2, 4, 8, 16}) {
    CAPTURE(P);
    const std::size_t count = static_cast<std::size_t>(P) * 512;
    const double n = static_cast<double>(count * 4);
    const Prediction p = predict(record(Collective::AllReduce, "rabenseifner", P, count),
                                 model(kAlpha, kBandwidth, kGamma));
    const double expected =
        2 * std::log2(P) * kAlpha + 2.0 * (P - 1) / P * n * kBeta + (P - 1.0) / P * n * kGamma;
    CHECK(p.total_s == doctest::Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("binomial broadcast: ceil(log2 P) (alpha + n beta); flat: (P-1)(alpha + n beta)") {
  for (int P : {2, 3, 4, 5, 8, 13}) {
    CAPTURE(P);
    const std::size_t count = 2500;
    const double n = static_cast<double>(count * 4);
    const double rounds = std::ceil(std::log2(P));
    const auto m = model(kAlpha, kBandwidth, kGamma);
    CHECK(predict(record(Collective::Broadcast, "binomial", P, count), m).total_s ==
          doctest::Approx(rounds * (kAlpha + n * kBeta)).epsilon(1e-12));
    // The root's port serialises its P-1 sends.
    CHECK(predict(record(Collective::Broadcast, "flat", P, count), m).total_s ==
          doctest::Approx((P - 1) * (kAlpha + n * kBeta)).epsilon(1e-12));
  }
}

TEST_CASE("ring all_gather and reduce_scatter: (P-1) alpha + (P-1)/P N beta (N = P blocks)") {
  for (int P : {2, 4, 6}) {
    CAPTURE(P);
    const std::size_t block = 1000;
    const double N = static_cast<double>(block * 4) * P;
    const auto m = model(kAlpha, kBandwidth, kGamma);
    CHECK(predict(record(Collective::AllGather, "ring", P, block), m).total_s ==
          doctest::Approx((P - 1) * kAlpha + (P - 1.0) / P * N * kBeta).epsilon(1e-12));
    CHECK(predict(record(Collective::ReduceScatter, "ring", P, block), m).total_s ==
          doctest::Approx((P - 1) * kAlpha + (P - 1.0) / P * N * (kBeta + kGamma)).epsilon(1e-12));
  }
}

TEST_CASE("ring topology: recursive doubling's long hops share links") {
  // P = 8 ranks on a physical ring; round k swaps with the rank 2^(k-1) away.
  const std::size_t count = 1000;
  const double n = static_cast<double>(count * 4);
  const Run run = record(Collective::AllReduce, "recursive_doubling", 8, count);
  CostModel m = model(kAlpha, kBandwidth, 0);
  m.topology = Topology::Ring;
  const Prediction p = predict(run, m);
  // Round 1 (distance 1): 1 message per directed link: alpha + n beta.
  CHECK(p.steps[1].seconds == doctest::Approx(kAlpha + n * kBeta));
  // Round 2 (distance 2): 0->2 and 1->3 both cross link 1->2 (and so on for
  // every second link): 2 messages on the busiest link, one more alpha for
  // the second hop.
  CHECK(p.steps[2].seconds == doctest::Approx(2 * kAlpha + 2 * n * kBeta));
  // Round 3 (distance 4, all clockwise on a tie): 8 messages x 4 hops over 8
  // clockwise links = 4 per link.
  CHECK(p.steps[3].seconds == doctest::Approx(kAlpha + 4 * n * kBeta + 3 * kAlpha));
  CHECK(p.steps[3].bottleneck.find("ring link") != std::string::npos);
}

TEST_CASE("switch topology: a shared uplink slows the steps that cross it") {
  // Ring all_reduce on 8 ranks, 2 per switch: in every step the messages
  // 1->2, 3->4, 5->6, 7->0 cross; each uplink carries 1 up and 1 down.
  const std::size_t count = 8 * 1000;
  const double chunk = static_cast<double>(count * 4) / 8;
  const Run run = record(Collective::AllReduce, "ring", 8, count);
  CostModel m = model(kAlpha, kBandwidth, 0);
  m.topology = Topology::Switch;
  m.ranks_per_switch = 2;
  m.uplink_bandwidth_Bps = kBandwidth / 4;  // 4x slower uplink
  const Prediction p = predict(run, m);
  CHECK(p.steps[1].seconds == doctest::Approx(kAlpha + chunk * 4 * kBeta));
  CHECK(p.steps[1].bottleneck.find("uplink") != std::string::npos);
  // 4 ranks per switch and uplink 4x slower: only 2 of 8 messages cross.
  m.ranks_per_switch = 4;
  CHECK(predict(run, m).steps[1].seconds == doctest::Approx(kAlpha + chunk * 4 * kBeta));
  // Everyone under one switch: the ports decide.
  m.ranks_per_switch = 8;
  CHECK(predict(run, m).steps[1].seconds == doctest::Approx(kAlpha + chunk * kBeta));
}

TEST_CASE("latency-bound small messages favour fewer steps, large ones fewer bytes") {
  const auto m = model(5e-6, 12.5e9, 0);
  auto total = [&](const char* algorithm, std::size_t count) {
    return predict(record(Collective::AllReduce, algorithm, 16, count), m).total_s;
  };
  CHECK(total("recursive_doubling", 16) < total("ring", 16));
  CHECK(total("ring", 16 << 20) < total("recursive_doubling", 16 << 20));
}

// ---- the calibrated model (simulator/model_file.hpp) ----------------------------

namespace {

// What a machine with this model would measure: sendrecv alpha + b beta, and
// the ring all_reduce's closed-form time.
std::vector<Measurement> synthetic_rows(const CostModel& truth) {
  std::vector<Measurement> rows;
  for (std::size_t b = 4096; b <= (16u << 20); b *= 4)
    rows.push_back({"sendrecv", "", 2, b, truth.alpha_s + static_cast<double>(b) * truth.beta()});
  for (std::size_t b = 65536; b <= (64u << 20); b *= 4) {
    Scenario s;
    s.algorithm = "ring";
    s.ranks = 2;
    s.count = b / 4;
    rows.push_back({"all_reduce", "ring", 2, b, predict(*closed_form(s), truth).total_s});
  }
  return rows;
}

}  // namespace

TEST_CASE("the fit recovers alpha, beta and gamma from times a known model made") {
  CostModel truth;
  truth.alpha_s = 17.3e-6;
  truth.bandwidth_Bps = 2.71e9;
  truth.gamma_s_per_byte = 0.23e-9;
  const ModelFit fit = fit_cost_model(synthetic_rows(truth));
  CHECK(fit.model.alpha_s == doctest::Approx(truth.alpha_s).epsilon(1e-6).scale(0));
  CHECK(fit.model.bandwidth_Bps == doctest::Approx(truth.bandwidth_Bps).epsilon(1e-6).scale(0));
  CHECK(fit.model.gamma_s_per_byte ==
        doctest::Approx(truth.gamma_s_per_byte).epsilon(1e-6).scale(0));
  CHECK(fit.sendrecv_rows == 7);
  CHECK(fit.all_reduce_rows == 6);
  CHECK(fit.sendrecv_rms < 1e-9);
  CHECK(fit.all_reduce_rms < 1e-9);
}

TEST_CASE("the fit weighs sizes by relative error: noise at 64 MiB does not move alpha") {
  CostModel truth;
  truth.alpha_s = 10e-6;
  truth.bandwidth_Bps = 2e9;
  auto rows = synthetic_rows(truth);
  for (auto& row : rows)
    if (row.op == "sendrecv" && row.bytes == (16u << 20)) row.seconds *= 1.05;  // 5% slower
  const ModelFit fit = fit_cost_model(rows);
  // Plain least squares would let the 16 MiB row's 420 us of excess shift
  // alpha by hundreds of microseconds; relative weighting keeps it close.
  CHECK(fit.model.alpha_s == doctest::Approx(truth.alpha_s).epsilon(0.05).scale(0));
  CHECK_THROWS_WITH_AS(fit_cost_model({{"sendrecv", "", 2, 4096, 1e-5}}),
                       doctest::Contains("at least two sizes"), std::invalid_argument);
}

TEST_CASE("a model file round-trips exactly; a bad one is refused naming the file") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "ringlab-test-cost-model.json").string();
  CostModel model;
  model.alpha_s = 1.0 / 3 * 1e-5;
  model.bandwidth_Bps = 2.0e9 / 7;
  model.gamma_s_per_byte = 1e-10 / 3;
  save_cost_model(path, model, "a note");
  const CostModel back = load_cost_model(path);
  CHECK(back.alpha_s == model.alpha_s);
  CHECK(back.bandwidth_Bps == model.bandwidth_Bps);
  CHECK(back.gamma_s_per_byte == model.gamma_s_per_byte);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp" + std::to_string(::getpid())));
  {
    std::ofstream out(path);
    out << R"({"format": "ringlab cost model", "version": 1, "alpha_s": 1e-6, "gamma_s_per_byte": 0})";
  }
  CHECK_THROWS_WITH_AS(load_cost_model(path), doctest::Contains("\"bandwidth_Bps\" is missing"),
                       std::runtime_error);
  {
    std::ofstream out(path);
    out << "{ not json";
  }
  CHECK_THROWS_WITH_AS(load_cost_model(path), doctest::Contains("is not JSON"), std::runtime_error);
  {
    std::ofstream out(path);
    out << R"({"format": "something else"})";
  }
  CHECK_THROWS_WITH_AS(load_cost_model(path), doctest::Contains(path.c_str()), std::runtime_error);
  std::filesystem::remove(path);
}

TEST_CASE("half duplex: a rank's sends and receives share its bandwidth, not its latency") {
  CostModel m = model(kAlpha, kBandwidth, 0);
  m.full_duplex = false;
  // 2 ranks, recursive doubling: one exchange of n bytes each way.
  const std::size_t count = 25000;
  const double n = static_cast<double>(count * 4);
  Scenario s;
  s.algorithm = "recursive_doubling";
  s.ranks = 2;
  s.count = count;
  const Forecast f = forecast(s, m);
  CHECK(f.path == PredictionPath::MessageLevel);  // closed forms are full duplex
  CHECK(f.why.find("full-duplex") != std::string::npos);
  CHECK(f.prediction.total_s == doctest::Approx(kAlpha + 2 * n * kBeta).epsilon(1e-12).scale(0));
  m.full_duplex = true;
  CHECK(forecast(s, m).prediction.total_s ==
        doctest::Approx(kAlpha + n * kBeta).epsilon(1e-12).scale(0));
  // One way (a binomial broadcast on 2 ranks) costs the same either way.
  s.collective = Collective::Broadcast;
  s.algorithm = "binomial";
  m.full_duplex = false;
  CHECK(forecast(s, m).prediction.total_s ==
        doctest::Approx(kAlpha + n * kBeta).epsilon(1e-12).scale(0));
}

TEST_CASE("the cache term: a run whose buffer fits moves at the cache's bandwidth") {
  CostModel m = model(kAlpha, kBandwidth, kGamma);
  m.cache_bytes = 64 << 10;
  m.cache_bandwidth_Bps = 4 * kBandwidth;
  CHECK(for_run(m, 4, 64 << 10).bandwidth_Bps == 4 * kBandwidth);
  CHECK(for_run(m, 4, (64 << 10) + 1).bandwidth_Bps == kBandwidth);
  // Ring all_reduce on 4 ranks: the textbook form at the run's beta.
  Scenario s;
  s.algorithm = "ring";
  s.ranks = 4;
  for (std::size_t count : {std::size_t{4096}, std::size_t{65536}}) {
    s.count = count;
    const double n = count * 4.0;
    const double beta = n <= (64 << 10) ? kBeta / 4 : kBeta;
    CHECK(forecast(s, m).prediction.total_s ==
          doctest::Approx(6 * kAlpha + 1.5 * n * beta + 0.75 * n * kGamma).epsilon(1e-12).scale(0));
  }
}

TEST_CASE("the cores term: in a step where more ranks than cores are busy, bytes take longer") {
  CostModel m = model(kAlpha, kBandwidth, kGamma);
  m.cores = 2;
  // Ring all_reduce on 4 ranks: all 4 busy in every step, so beta and gamma
  // count twice; alpha does not.
  const std::size_t count = 4000;
  const double n = count * 4.0;
  Scenario s;
  s.algorithm = "ring";
  s.ranks = 4;
  s.count = count;
  const Forecast ring = forecast(s, m);
  CHECK(ring.path == PredictionPath::MessageLevel);
  CHECK(ring.prediction.total_s ==
        doctest::Approx(6 * kAlpha + 1.5 * n * 2 * kBeta + 0.75 * n * 2 * kGamma)
            .epsilon(1e-12)
            .scale(0));
  // Binomial broadcast from 0 on 4 ranks: step 1 has 2 busy ranks (0 -> 2),
  // step 2 has 4 (0 -> 1, 2 -> 3): only step 2 slows down.
  s.collective = Collective::Broadcast;
  s.algorithm = "binomial";
  CHECK(forecast(s, m).prediction.total_s ==
        doctest::Approx((kAlpha + n * kBeta) + (kAlpha + 2 * n * kBeta)).epsilon(1e-12).scale(0));
  // 2 ranks on 2 cores: as if there were no cores term, and a closed form answers.
  s.collective = Collective::AllReduce;
  s.algorithm = "ring";
  s.ranks = 2;
  const Forecast two = forecast(s, m);
  CHECK(two.path == PredictionPath::ClosedForm);
  CHECK(two.prediction.total_s ==
        doctest::Approx(2 * kAlpha + n * kBeta + 0.5 * n * kGamma).epsilon(1e-12).scale(0));
}

TEST_CASE(
    "a ProcessGroup's auto on more ranks than the model's cores runs as crowded TCP ranks do") {
  // The TCP ranks of one host with fewer processors than ranks send fewer
  // messages for small vectors (all_reduce.cpp): reduce_broadcast, 2(P-1)
  // messages, against recursive doubling's P log2 P. The simulator's own
  // auto picks by prediction (forecast.hpp); the measured rule is beside it.
  CostModel m = model(kAlpha, kBandwidth, kGamma);
  Scenario s;
  s.algorithm = "auto";
  s.ranks = 4;
  s.count = 1024;
  for (const int cores : {0, 4, 2}) {
    INFO(cores << " cores");
    m.cores = cores;
    const Forecast f = forecast(s, m);
    CHECK(f.algorithm == "auto");
    CHECK(f.rule == (cores == 2 ? "reduce_broadcast" : "recursive_doubling"));
    CHECK(measured_auto_choice(s, m) == f.rule);
    Scenario rule = s;
    rule.algorithm = f.rule;
    CHECK(f.rule_s == forecast(rule, m).prediction.total_s);
    CHECK(forecast(rule, m).messages == (cores == 2 ? 6u : 8u));
    // A measured auto row is priced as the rule it ran, not as the fastest.
    CHECK(predicted_seconds({"all_reduce", "auto", 4, 4096, 1e-3}, m) == f.rule_s);
  }
  // Above 64 KiB the bytes decide, crowded or not.
  s.count = 1 << 20;
  CHECK(forecast(s, m).rule == "rabenseifner");
}

TEST_CASE("the fit finds half duplex and a cache term where the times have them") {
  CostModel truth;
  truth.alpha_s = 9e-6;
  truth.bandwidth_Bps = 3e9;
  truth.full_duplex = false;
  truth.cache_bytes = 512 << 10;
  truth.cache_bandwidth_Bps = 8e9;
  truth.gamma_s_per_byte = 0.3e-9;
  std::vector<Measurement> rows;
  for (std::size_t b = 4096; b <= (16u << 20); b *= 2) {
    const CostModel run = for_run(truth, 2, b);
    rows.push_back({"pingpong", "", 2, b, port_time(run, 1, b)});
    rows.push_back({"sendrecv", "", 2, b, run.alpha_s + bytes_time(run, 2 * b)});
  }
  for (std::size_t b = 65536; b <= (64u << 20); b *= 4) {
    Scenario s;
    s.algorithm = "ring";
    s.ranks = 2;
    s.count = b / 4;
    rows.push_back({"all_reduce", "ring", 2, b, forecast(s, truth).prediction.total_s});
  }
  const ModelFit fit = fit_cost_model(rows);
  CHECK_FALSE(fit.model.full_duplex);
  CHECK(fit.model.cache_bytes == truth.cache_bytes);
  CHECK(fit.model.alpha_s == doctest::Approx(truth.alpha_s).epsilon(1e-6).scale(0));
  CHECK(fit.model.bandwidth_Bps == doctest::Approx(truth.bandwidth_Bps).epsilon(1e-6).scale(0));
  CHECK(fit.model.cache_bandwidth_Bps ==
        doctest::Approx(truth.cache_bandwidth_Bps).epsilon(1e-6).scale(0));
  CHECK(fit.model.gamma_s_per_byte ==
        doctest::Approx(truth.gamma_s_per_byte).epsilon(1e-6).scale(0));
}
