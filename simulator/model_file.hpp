// A calibrated cost model: fitted from measured times, kept in a JSON file
// that `ringlab sim --model FILE` reads (docs/cost-model.md).
//
// The fit (fit_cost_model), in two weighted least-squares steps, each
// minimising the sum of squared *relative* errors ((predicted - t) / t)^2, so
// a 4 KiB row weighs as much as a 64 MiB one (plain least squares would let
// the largest sizes decide alpha too):
//   1. alpha and beta from the 2-rank point-to-point rows: "pingpong" (half
//      a round trip of b bytes: one message one way, its latency included)
//      and "sendrecv" (b each way at once). The
//      model may grow two terms where the data ask for them
//      (cost.hpp): half duplex (over loopback a rank's one core copies both
//      ways, so a sendrecv costs alpha + 2b beta: it needs the one-way rows
//      to tell), and a cache term (a faster beta for buffers of at most
//      cache_bytes; cache_bytes a power of two from 64 KiB to 8 MiB). Every
//      shape is fitted; the smallest error wins, a cache term only if it
//      cuts the error by a fifth.
//   2. gamma from 2-rank all_reduce rows: the model's time is linear in
//      gamma, A + gamma B, where A is the prediction with gamma = 0 and B
//      the bytes reduced on the critical path (the sum over steps of the
//      most one rank reduces). gamma minimises the same relative error, and
//      is not negative.
// Rows of more ranks than the machine has cores are not fitted: they are
// what the validation compares against (docs/cost-model.md says why); the
// caller sets the model's cores (the machine's).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "simulator/cost.hpp"

namespace ringlab::sim {

struct Measurement {
  std::string op;         // "sendrecv", "pingpong" (one way) or "all_reduce"
  std::string algorithm;  // all_reduce only
  int ranks = 2;
  std::size_t bytes = 0;  // the size nccl-tests reports
  double seconds = 0;     // time per call
};

struct ModelFit {
  CostModel model;
  std::size_t sendrecv_rows = 0, all_reduce_rows = 0;  // sendrecv_rows: point-to-point ones
  double sendrecv_rms = 0, all_reduce_rms = 0;         // root mean square relative error of the fit
};

// Throws std::invalid_argument when there are fewer than two 2-rank sendrecv
// sizes (no line through them) or a time is not positive.
ModelFit fit_cost_model(const std::vector<Measurement>& rows);

// What the model predicts for one measured row (sendrecv: alpha + b beta on
// full-duplex ports; all_reduce: the forecast's auto path).
double predicted_seconds(const Measurement& row, const CostModel& model);

// The file: {"format": "ringlab cost model", "version": 1, "alpha_s": ..,
// "bandwidth_Bps": .., "gamma_s_per_byte": .., "full_duplex": .., "cache_bytes":
// .., "cache_bandwidth_Bps": .., "cores": .., "note": ".."} (SI units; the
// last four optional). Written
// atomically; read back exactly (doubles round-trip). load_cost_model
// throws std::runtime_error naming the file and what is wrong with it.
void save_cost_model(const std::string& path, const CostModel& model, const std::string& note);
CostModel load_cost_model(const std::string& path);

}  // namespace ringlab::sim
