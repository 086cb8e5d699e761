// How much of DDP's gradient all_reduce hides behind the backward pass: the
// real lesson of bucketing, answered with the simulator's alpha-beta-gamma
// cost model (simulator/cost.hpp).
//
// The model: the backward pass takes backward_s and produces the gradients
// of `layers` equal tensors (parameters / layers floats each) one after
// another at a constant rate; DDP's buckets (buckets.hpp: the first up to
// first_bucket_bytes, then bucket_cap_mb) each become ready when their last
// gradient is produced. Bucket all_reduces run one at a time in bucket order
// (one communication stream, as a process group's): bucket b starts at
// max(ready_b, end_{b-1}) and takes all_reduce_s(bytes_b), which the cost
// model predicts for the chosen algorithm on `ranks` ranks. Then
//   finish   = the end of the last all_reduce (>= backward_s)
//   exposed  = finish - backward_s        the communication left after backward
//   hidden   = total all_reduce time - exposed
// With one bucket nothing is hidden; with many small buckets more is hidden
// but every all_reduce pays its latency again.
//
//   auto cost = simulated_all_reduce_cost(8, "ring", sim::CostModel{});
//   OverlapReport r = simulate_overlap({.parameters = 25'000'000, .ranks = 8}, cost);
//   r.hidden_fraction();
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "simulator/cost.hpp"

namespace ringlab::training {

struct OverlapScenario {
  std::size_t parameters = 25'000'000;  // float32 parameters in the model
  int layers = 50;                      // parameter tensors, produced in turn
  double bucket_cap_mb = 25;
  std::size_t first_bucket_bytes = 1 << 20;
  double backward_s = 0.1;
};

struct BucketTiming {
  std::size_t bytes = 0;
  int tensors = 0;
  double ready_s = 0;  // its last gradient produced
  double start_s = 0;  // its all_reduce starts
  double end_s = 0;
  double all_reduce_s = 0;  // the cost model's time for its bytes
};

struct OverlapReport {
  std::vector<BucketTiming> buckets;
  double backward_s = 0;
  double communication_s = 0;  // the sum of the buckets' all_reduce times
  double finish_s = 0;
  double exposed_s() const { return finish_s - backward_s; }
  // Never below 0 (rounding could make communication - exposed a hair negative).
  double hidden_s() const { return std::max(0.0, communication_s - exposed_s()); }
  double hidden_fraction() const { return communication_s > 0 ? hidden_s() / communication_s : 0; }
};

// Seconds one all_reduce of `bytes` takes.
using AllReduceCost = std::function<double(std::size_t bytes)>;

// Throws std::invalid_argument for no parameters, layers < 1 or more layers
// than parameters, a negative bucket cap or backward time.
OverlapReport simulate_overlap(const OverlapScenario& scenario, const AllReduceCost& all_reduce_s);

// The cost model's prediction for a float32 all_reduce of `bytes` with
// `algorithm` ("" = the default) on `ranks` ranks, from a simulated run
// (sim::simulate without values, then sim::predict); remembered per size.
AllReduceCost simulated_all_reduce_cost(int ranks, std::string algorithm,
                                        const sim::CostModel& model);

}  // namespace ringlab::training
