// One entry to the three ways the simulator can price a scenario, and the
// rule that picks one:
//
//   recorded        simulate() (record.hpp): every message, buffer state and
//                   provenance; what the GUI and `ringlab sim --steps` show.
//                   Up to 1024 ranks.
//   message-level   simulate_traffic() (traffic.hpp): the same algorithm
//                   code on data-free ranks; sizes and steps only. Up to
//                   16,384 ranks; any topology.
//   closed form     closed_form() (closed_form.hpp): the regular algorithms'
//                   steps derived, nothing simulated. Up to 65,536 ranks;
//                   fully connected topology only.
//
// All three give the same prediction where they all apply (tests/
// test_sim_predict.cpp). Auto takes the closed form where there is one and
// the topology is fully connected, else the message-level path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/cost.hpp"
#include "simulator/record.hpp"

namespace ringlab::sim {

enum class PredictionPath : std::uint8_t { Auto, Recorded, MessageLevel, ClosedForm };
std::string_view path_name(PredictionPath path);  // "recorded", "message-level", "closed form"
// "auto", "recorded", "messages", "closed"; throws std::invalid_argument listing them.
PredictionPath parse_path(std::string_view name);

struct Forecast {
  PredictionPath path = PredictionPath::Auto;  // the one that answered
  std::string why;                             // auto: why not the closed form, when it was not
  std::string algorithm;                       // the resolved name
  std::string runs_as;  // what auto picked (closed form only), else the algorithm
  Step steps = 0;
  std::uint64_t messages = 0;
  std::vector<std::uint64_t> bytes_sent;  // per rank
  Prediction prediction;
};

// The largest world each path runs (its own limit; a closed form may still
// be missing for the algorithm).
int max_ranks(PredictionPath path);

// Checks what can be checked before any rank starts (ranks within the path's
// limit, root, op and dtype, algorithm name) and returns the algorithm's
// resolved name; throws std::invalid_argument naming no rank.
std::string check_scenario(const Scenario& scenario, PredictionPath path);

// Prices the scenario by `path` (Auto: the rule above). all_reduce's auto
// runs as it would on TCP ranks of one host with the model's cores (where
// the ranks outnumber them it sends fewer messages, all_reduce.cpp). Throws
// std::invalid_argument for a bad scenario or a path that cannot answer it
// (saying why and which path can).
Forecast forecast(const Scenario& scenario, const CostModel& model,
                  PredictionPath path = PredictionPath::Auto);

}  // namespace ringlab::sim
