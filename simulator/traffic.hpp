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

// What the message-level path takes, so that any run of it fits in about
// 2 GB (and, on the 2-core machine of docs/benchmarks.md, under 30 s):
//  - ranks: the algorithms keep a table of P blocks on each of P ranks
//    (split_even in primitives/, the collectives' block lists), P^2 x 16
//    bytes: 1 GiB at 8192 ranks, 4 GiB at 16,384. (Each fiber's stack also
//    needs two memory mappings, of the kernel's default 65530.)
//  - messages: each is kept (a TrafficMessage) until the run is priced.
// Where the algorithm has a closed form, its message count is known before
// any rank starts and a run over the limit is refused at once; otherwise the
// run stops at the limit.
inline constexpr int kMaxTrafficRanks = 8192;
inline constexpr std::uint64_t kMaxTrafficMessages = std::uint64_t{1} << 23;  // 8,388,608

// Runs the scenario's algorithm without data. Throws std::invalid_argument for
// a bad scenario (as simulate() does; ranks up to kMaxTrafficRanks, sizes up
// to kMaxScenarioBytes) or one that sends more than max_messages, and
// CommError if the algorithm deadlocks, naming the ranks.
Traffic simulate_traffic(const Scenario& scenario,
                         std::uint64_t max_messages = kMaxTrafficMessages);
// What simulate_traffic refuses before any rank starts; returns the resolved
// algorithm name.
std::string check_traffic(const Scenario& scenario,
                          std::uint64_t max_messages = kMaxTrafficMessages);

Prediction predict(const Traffic& traffic, const CostModel& model);

}  // namespace ringlab::sim
