// Closed forms: what the regular algorithms do, step by step, derived from
// how they are written (the blocks at the top of primitives/*.cpp) instead of
// by running them, for the fully connected topology. They answer in
// microseconds where the message-level path (traffic.hpp) would simulate
// billions of messages (a ring of 65,536 ranks sends 8.6 billion), and they
// are that path's test oracle: the two agree exactly (tests/test_sim_predict.cpp).
//
// A closed form is a list of step shapes, each repeated for a number of
// consecutive steps ("per-step patterns"): a shape holds what the cost model
// prices a step by on the fully connected topology, the number of messages
// and bytes on the busiest ports and the most bytes one rank reduces. Pricing
// adds each step's time in step order, as the other paths do, so the totals
// agree to the last bit, not only to a tolerance.
//
// Step numbers follow the record's Lamport rule (record.hpp), which the
// derivations below the algorithms' code in closed_form.cpp spell out per
// algorithm. Where a case breaks an algorithm's regularity (a ring whose
// blocks need different numbers of 1 MiB segments), closed_form() returns
// nullopt and says why; the message-level path answers instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simulator/cost.hpp"
#include "simulator/record.hpp"

namespace ringlab::sim {

// One step as the fully connected topology prices it.
struct StepShape {
  std::uint64_t messages = 0, bytes = 0;  // over the whole step
  // Port loads (messages, bytes) that may be the busiest: no load here is
  // at most another in both, since port time grows with both.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ports;
  std::uint64_t most_reduced = 0;  // the most bytes one rank reduces

  void port(std::uint64_t port_messages, std::uint64_t port_bytes);
  void reduced(std::uint64_t rank_bytes) { most_reduced = std::max(most_reduced, rank_bytes); }
  bool operator==(const StepShape&) const = default;
};

struct Schedule {
  std::string operation;  // "all_reduce"
  std::string algorithm;  // as asked ("auto" stays auto)
  std::string runs_as;    // what runs: auto's choice, else the algorithm
  int ranks = 0;
  std::size_t count = 0;
  DType dtype = DType::Float32;
  // Steps 0, 1, ... in order: shape, and how many consecutive steps have it.
  std::vector<std::pair<StepShape, Step>> runs;
  Step steps = 0;  // the last step
  std::uint64_t messages = 0;
  std::vector<std::uint64_t> bytes_sent, messages_sent;  // per rank

  void append(const StepShape& shape, Step repeat = 1);  // merges with the last run
};

// The closed form of the scenario's algorithm, or nullopt (why_not says why:
// no closed form for that algorithm, or this case is not regular). Ranks up
// to kMaxPredictionRanks, sizes up to kMaxScenarioBytes (cost.hpp). Throws
// std::invalid_argument for a bad scenario.
inline constexpr int kMaxPredictionRanks = 65536;
std::optional<Schedule> closed_form(const Scenario& scenario, std::string* why_not = nullptr);

// Why the algorithm that runs (auto: its choice, as in closed_form) takes
// more steps than its textbook count where it cuts its messages into
// segments: the ring's and Rabenseifner's 1 MiB segments (64 MiB on 8 ranks:
// 8 segments a block, 63 steps instead of 14), the binary tree's 256 KiB
// ones. "" where nothing is cut. Throws as closed_form does.
std::string segment_note(const Scenario& scenario);

// Whether every message of the algorithm that runs goes between ring
// neighbours (rank r to r+1 or r-1, mod P): the ring all_reduce, all_gather
// and reduce_scatter. On the ring topology each such message is the only one
// on its link, so the link costs what the ports do and the closed form's
// prediction holds there too, to the last bit.
bool neighbours_only(const Scenario& scenario);

// Prices the schedule on the fully connected topology (model.topology is
// not looked at: a closed form knows ports, not links), or on the ring
// topology where neighbours_only says so.
Prediction predict(const Schedule& schedule, const CostModel& model);

}  // namespace ringlab::sim
