// `ringlab sim ddp --params N --bucket-mb B --backward-ms T --ranks P ...`
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "primitives/algorithms.hpp"
#include "tools/sim_ddp.hpp"
#include "training_sim/overlap.hpp"

namespace ringlab::cli {

namespace {

// A count of parameters, written as a whole number or in exponent form
// (25e6), from 1 to `most`: NaN, infinities, negative and fractional values
// are refused with what to give instead (CLI::Range lets NaN through, and a
// NaN count became a buffer of 2^63 elements).
CLI::Validator parameter_count(double most) {
  return CLI::Validator(
      [most](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        const bool number = !input.empty() && end == input.c_str() + input.size();
        if (number && std::isfinite(value) && value >= 1 && value <= most &&
            std::floor(value) == value)
          return {};
        return input + " is not allowed: give a whole number of parameters from 1 to " +
               std::to_string(static_cast<long long>(most)) + ", e.g. 25000000 or 25e6";
      },
      "1..4e9");
}

}  // namespace

void add_ddp_sim_options(CLI::App& sim, DdpSimOptions& o) {
  // Up to 4e9 (16 GB of gradients): the simulator records every message of
  // each all_reduce it prices, and the whole model's is one of them.
  sim.add_option("--params", o.params,
                 "ddp: float32 parameters in the model (default 25e6, at most 4e9)")
      ->check(parameter_count(4e9));
  sim.add_option("--layers", o.layers, "ddp: parameter tensors, produced in turn (default 50)")
      ->check(CLI::Range(1, 1000000));
  sim.add_option("--bucket-mb", o.bucket_mb, "ddp: bucket_cap_mb (default 25)")
      ->check(CLI::Range(0.0, 1e6));
  sim.add_option("--first-bucket-mb", o.first_bucket_mb, "ddp: the first bucket's cap (default 1)")
      ->check(CLI::Range(0.0, 1e6));
  sim.add_option("--backward-ms", o.backward_ms, "ddp: how long backward takes (default 100)")
      ->check(CLI::Range(0.0, 1e9));
}

namespace {

training::OverlapScenario scenario_of(const DdpSimOptions& o, double bucket_mb) {
  training::OverlapScenario s;
  s.parameters = static_cast<std::size_t>(o.params);
  s.layers = o.layers;
  s.bucket_cap_mb = bucket_mb;
  s.first_bucket_bytes = static_cast<std::size_t>(o.first_bucket_mb * 1024 * 1024);
  s.backward_s = o.backward_ms * 1e-3;
  return s;
}

double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

void run_sim_ddp(const DdpSimOptions& o, int ranks, const std::string& algorithm,
                 const sim::CostModel& model, bool compare) {
  const training::AllReduceCost cost = training::simulated_all_reduce_cost(ranks, algorithm, model);
  const auto parameters = static_cast<std::size_t>(o.params);
  std::printf(
      "# ringlab sim ddp: %zu float32 parameters (%.1f MiB) in %d layers, backward %.3g ms, "
      "%d ranks, all_reduce %s\n",
      parameters, mib(parameters * sizeof(float)), o.layers, o.backward_ms, ranks,
      (algorithm.empty() ? algorithm_names(Collective::AllReduce).front() : algorithm).c_str());
  std::printf(
      "# cost model: %s, alpha %.3g us, bandwidth %.3g GB/s, gamma %.3g ns/B; the "
      "gradients come at a constant rate, the buckets' all_reduces run one at a time\n",
      std::string(sim::topology_name(model.topology)).c_str(), model.alpha_s * 1e6,
      model.bandwidth_Bps / 1e9, model.gamma_s_per_byte * 1e9);
  if (compare) {
    std::printf("%12s %8s %14s %14s %12s %9s\n", "bucket (MiB)", "buckets", "all_reduce (ms)",
                "finish (ms)", "exposed (ms)", "hidden");
    for (const double bucket_mb : {0.25, 1.0, 5.0, 25.0, 100.0, 1e6}) {
      training::OverlapScenario s = scenario_of(o, bucket_mb);
      if (bucket_mb >= 1e6) s.first_bucket_bytes = s.parameters * sizeof(float);  // one bucket
      const training::OverlapReport r = training::simulate_overlap(s, cost);
      char label[32];
      std::snprintf(label, sizeof label, bucket_mb >= 1e6 ? "all in one" : "%g", bucket_mb);
      std::printf("%12s %8zu %15.3f %14.3f %12.3f %8.1f%%\n", label, r.buckets.size(),
                  r.communication_s * 1e3, r.finish_s * 1e3, r.exposed_s() * 1e3,
                  100 * r.hidden_fraction());
    }
    std::printf(
        "# smaller buckets start communicating earlier, but every all_reduce pays its "
        "latency again\n");
    return;
  }
  const training::OverlapReport r = training::simulate_overlap(scenario_of(o, o.bucket_mb), cost);
  std::printf(
      "# buckets: the first up to %.3g MiB, then up to %.3g MiB (bucket_cap_mb), in the "
      "order backward fills them\n",
      o.first_bucket_mb, o.bucket_mb);
  std::printf("%6s %7s %10s %10s %10s %10s %14s\n", "bucket", "tensors", "MiB", "ready (ms)",
              "start (ms)", "end (ms)", "all_reduce (ms)");
  const std::size_t shown = r.buckets.size() <= 40 ? r.buckets.size() : 20;
  for (std::size_t b = 0; b < r.buckets.size(); ++b) {
    if (b == shown && shown < r.buckets.size() - 10) {
      std::printf("%6s (%zu more)\n", "...", r.buckets.size() - shown - 10);
      b = r.buckets.size() - 10;
    }
    const training::BucketTiming& t = r.buckets[b];
    std::printf("%6zu %7d %10.3f %10.3f %10.3f %10.3f %14.3f\n", b, t.tensors, mib(t.bytes),
                t.ready_s * 1e3, t.start_s * 1e3, t.end_s * 1e3, t.all_reduce_s * 1e3);
  }
  std::printf(
      "backward %.3f ms; all_reduce %.3f ms in all; the step's gradients are ready at "
      "%.3f ms\n",
      r.backward_s * 1e3, r.communication_s * 1e3, r.finish_s * 1e3);
  std::printf("hidden behind backward: %.3f ms of %.3f ms (%.1f%%); exposed after it: %.3f ms\n",
              r.hidden_s() * 1e3, r.communication_s * 1e3, 100 * r.hidden_fraction(),
              r.exposed_s() * 1e3);
  const double one = cost(parameters * sizeof(float));
  std::printf("without buckets (one all_reduce after backward): ready at %.3f ms\n",
              (r.backward_s + one) * 1e3);
}

}  // namespace ringlab::cli
