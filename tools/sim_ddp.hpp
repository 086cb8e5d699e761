// `ringlab sim ddp`: how much of DDP's gradient all_reduce hides behind the
// backward pass, for a model size and a bucket size (training_sim/overlap.hpp),
// with the all_reduce's time from the simulator's cost model.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "simulator/cost.hpp"

namespace ringlab::cli {

struct DdpSimOptions {
  double params = 25e6;  // float32 parameters
  int layers = 50;
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  double backward_ms = 100;
};

// The ddp options of `ringlab sim`.
void add_ddp_sim_options(CLI::App& sim, DdpSimOptions& options);

// Prints the buckets' timeline and the hidden share; with compare, the hidden
// share for a range of bucket sizes instead.
void run_sim_ddp(const DdpSimOptions& options, int ranks, const std::string& algorithm,
                 const sim::CostModel& model, bool compare);

}  // namespace ringlab::cli
