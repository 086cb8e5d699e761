// One entry to the three ways the simulator can price a scenario, and the
// rule that picks one:
//
//   recorded        simulate() (record.hpp): every message, buffer state and
//                   provenance; what the GUI and `ringlab sim --steps` show.
//                   Up to 1024 ranks.
//   message-level   simulate_traffic() (traffic.hpp): the same algorithm
//                   code on data-free ranks; sizes and steps only. Up to
//                   8192 ranks and 2^23 messages (traffic.hpp); any topology.
//   closed form     closed_form() (closed_form.hpp): the regular algorithms'
//                   steps derived, nothing simulated. Up to 65,536 ranks;
//                   the fully connected topology, and the ring for the
//                   algorithms that only talk to ring neighbours.
//
// All three give the same prediction where they all apply (tests/
// test_sim_predict.cpp). Auto takes the closed form where there is one for
// the topology, else the message-level path.
//
// all_reduce's auto, here and on real transports. A ProcessGroup's auto
// (primitives/all_reduce.cpp) follows a rule measured on real hosts,
// all_reduce_auto_choice: by size, rounds or messages for small vectors,
// bytes for large ones. A host's ranks all reach each other directly, as on
// the fully connected topology, and no transport of ringlab runs on a ring
// or a switch. The simulator knows the topology and the cost model instead,
// so its auto is a tuner: it predicts every other algorithm of the table on
// the given model and topology and runs the fastest. Where the two disagree
// (the ring topology, where only neighbours share a link and Horovod's ring
// wins), the output says what the measured rule would run.
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
  std::string runs_as;  // auto: the fastest predicted algorithm, else the algorithm
  // all_reduce's auto: what a ProcessGroup's auto runs at this size (the
  // measured rule, measured_auto_choice), and its predicted time here; ""
  // and 0 otherwise.
  std::string rule;
  double rule_s = 0;
  // auto: the algorithms that could not be priced by this path, and why
  // (a limit of the message-level path); auto picked among the others.
  std::vector<std::string> unpriced;
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
// is the fastest predicted of the table's other algorithms (ties: the
// first in the table), with the measured rule's choice beside it. Throws
// std::invalid_argument for a bad scenario or a path that cannot answer it
// (saying why and which path can).
Forecast forecast(const Scenario& scenario, const CostModel& model,
                  PredictionPath path = PredictionPath::Auto);

// Whether the scenario is all_reduce's auto (by its descriptor).
bool is_all_reduce_auto(const Scenario& scenario);
// What a ProcessGroup's auto runs for this all_reduce: all_reduce_auto_choice
// (the rule measured on real hosts) as TCP ranks of one host with the
// model's cores run it (more ranks than cores: fewer messages for small
// vectors, all_reduce.cpp).
std::string measured_auto_choice(const Scenario& scenario, const CostModel& model);

}  // namespace ringlab::sim
