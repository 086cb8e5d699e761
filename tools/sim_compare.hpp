// `ringlab sim OP --compare`: every algorithm of the op side by side across a
// range of sizes, on the cost model's topology, with auto's pick and the
// measured rule's beside it (tools/sim_compare.cpp).
#pragma once

#include <string>

#include "simulator/cost.hpp"
#include "simulator/forecast.hpp"
#include "simulator/record.hpp"

namespace ringlab::cli {

// base: the op, ranks, dtype, op and root (its count and algorithm are set
// per cell); sizes: MIN:MAX bytes, x4 apart.
void run_compare(const sim::Scenario& base, const std::string& sizes, sim::PredictionPath path,
                 const sim::CostModel& model);

// "fully_connected: a private link between every pair of ranks ...": what a
// figure on this topology assumes, in one line.
std::string topology_assumes(const sim::CostModel& model);

// "1K", "1.5M": a size as --sizes takes it.
std::string human_bytes(double bytes);

}  // namespace ringlab::cli
