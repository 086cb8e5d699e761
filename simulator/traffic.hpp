// The message-level prediction path: the scenario's algorithm from
// primitives/, unchanged, on virtual ranks (fibers) that move no data at all.
// Messages carry their size and the sender's step stamp, not bytes; user
// buffers and scratch all point into one PROT_NONE reservation (fiber_world.hpp,
// share_memory), so pointer arithmetic is legal and any stray dereference
// faults; copies and reductions do nothing but count bytes. What comes out is
// the Traffic: every message's sender, receiver, size and step, and the most
// bytes a rank reduced in each step. That is all the cost model (cost.hpp)
// needs, at ~24 bytes a message instead of a record's hundreds.
//
// Steps follow the record's rule exactly (record.hpp: a message travels in
// max(send stamp, receive stamp) + 1; waiting for it moves the receiver's
// clock there; waiting for a send moves the sender's clock to its stamp + 1),
// computed online as the fibers run: a run's Traffic and its Run price the
// same (tests/test_sim_predict.cpp pins that), and the closed forms
// (closed_form.hpp) are checked against this path.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "simulator/cost.hpp"
#include "simulator/record.hpp"

namespace ringlab::sim {

struct TrafficMessage {
  Step step = 0;
  std::uint32_t src = 0, dst = 0;
  std::uint64_t bytes = 0;
};

struct Traffic {
  std::string operation;  // "all_reduce"
  std::string algorithm;  // the resolved name
  int ranks = 0;
  std::size_t count = 0;  // Scenario::count
  DType dtype = DType::Float32;
  Step steps = 0;  // the last step with a message or a reduction

  std::vector<TrafficMessage> messages;     // sorted by step (then send order)
  std::vector<std::size_t> message_begin;   // messages of step k: [begin[k], begin[k+1])
  std::vector<std::uint64_t> most_reduced;  // per step 0..steps: the most one rank reduced
  std::vector<std::uint64_t> bytes_sent, messages_sent;  // per rank

  std::span<const TrafficMessage> messages_in(Step k) const;
};

// Ranks the message-level path runs: its fibers need a stack each, and two
// memory mappings per stack (stack and guard page) must stay under the
// kernel's default limit of 65530 mappings.
inline constexpr int kMaxTrafficRanks = 16384;

// Runs the scenario's algorithm without data. Throws std::invalid_argument for
// a bad scenario (as simulate() does; ranks up to kMaxTrafficRanks) and
// CommError if the algorithm deadlocks, naming the ranks.
Traffic simulate_traffic(const Scenario& scenario);

Prediction predict(const Traffic& traffic, const CostModel& model);

}  // namespace ringlab::sim
