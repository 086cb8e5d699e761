// `ringlab sim OP --compare-values`: every algorithm of a reducing collective
// on the same inputs in the chosen dtype, and where their results differ:
// the element, each algorithm's value and the exact one (tools/sim_values.cpp).
// In float16 and bfloat16 every hop of an algorithm rounds, so the order in
// which it adds decides the last bits; this shows it.
#pragma once

#include "simulator/record.hpp"

namespace ringlab::cli {

// base: the op (all_reduce, reduce or reduce_scatter; sum or avg), ranks,
// count, dtype and root; its algorithm and input are set here.
void run_compare_values(const sim::Scenario& base);

}  // namespace ringlab::cli
