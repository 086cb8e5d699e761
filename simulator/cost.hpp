// The alpha-beta-gamma cost model: what a recorded run would take on a
// network with per-message latency alpha, time per byte beta on each link and
// time per reduced byte gamma.
//
// Nomenclature (per step k):
//   port        a rank's network interface, one per direction (send, receive),
//               full duplex. Every message costs alpha + bytes * beta on the
//               sender's send port and on the receiver's receive port, and the
//               messages of one port in one step are serialised.
//   link        a shared wire between switches (topologies below); a message
//               crossing it costs bytes / link bandwidth there, serialised with
//               the others crossing it in the same step.
//   step time   T_k = max over ports and links of their busy time
//               + gamma * max over ranks of the bytes that rank reduced in k.
//               A port that carries m messages of b bytes in all is busy
//               m * alpha + b * beta (port_time: computed from the two
//               integers, so every path that knows them gets the same bits).
//   total       sum of T_k in step order (steps are bulk-synchronous rounds).
// Topologies:
//   fully_connected  a private wire between every pair of ranks: ports only.
//   ring             a physical bidirectional ring 0-1-...-(P-1)-0; a message
//                    takes the shorter way round (clockwise on a tie) and
//                    occupies every directed link it crosses; its latency is
//                    alpha * hops (cut-through).
//   switch           ranks_per_switch ranks share a leaf switch whose one
//                    uplink (each direction) carries everything leaving or
//                    entering the group, at uplink_bandwidth.
// Closed forms this reproduces (n bytes, P ranks, equal blocks):
//   ring all_reduce      2(P-1) alpha + 2(P-1)/P n beta + (P-1)/P n gamma
//   recursive doubling   log2 P (alpha + n beta + n gamma)          (P = 2^k)
//   rabenseifner         2 log2 P alpha + 2(P-1)/P n beta + (P-1)/P n gamma
//   binomial broadcast   ceil(log2 P) (alpha + n beta)
//   ring all_gather / reduce_scatter   (P-1) alpha + (P-1)/P n' beta (n' = P blocks)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/record.hpp"

namespace ringlab::sim {

enum class Topology : std::uint8_t { FullyConnected, Ring, Switch };
std::string_view topology_name(Topology t);
Topology parse_topology(std::string_view name);  // "fully_connected", "ring", "switch"

struct CostModel {
  double alpha_s = 5e-6;             // latency per message, seconds
  double bandwidth_Bps = 12.5e9;     // per port and ring link, bytes/s (100 Gb/s); beta = 1/this
  double gamma_s_per_byte = 0.0;     // time per reduced byte
  Topology topology = Topology::FullyConnected;
  int ranks_per_switch = 8;          // Switch only
  double uplink_bandwidth_Bps = 0;   // Switch only; 0 = bandwidth_Bps
  // Two terms a calibrated machine may need (ringlab sim --calibrate picks
  // them when its measurements say so; the defaults describe a network):
  //  - full_duplex = false: a rank's sends and receives share its bandwidth
  //    (over loopback TCP one core copies both ways), so a rank is busy
  //    alpha * max(messages out, messages in) + (bytes out + bytes in) * beta
  //    (latencies still overlap). Closed forms assume full duplex.
  //  - cache_bytes > 0: a run whose buffer (the size nccl-tests reports)
  //    is at most cache_bytes moves its bytes at cache_bandwidth_Bps: its
  //    data stays in cache. Larger runs move at bandwidth_Bps.
  //  - cores > 0: ranks share the machine's cores, so in a step where k >
  //    cores ranks send or receive, each gets cores / k of a core and every
  //    byte moved or reduced in it takes k / cores as long (latency does
  //    not change). Closed forms do not count busy ranks: with P > cores
  //    the message-level path answers.
  // for_run() applies the cache term to one run.
  bool full_duplex = true;
  std::uint64_t cache_bytes = 0;
  double cache_bandwidth_Bps = 0;
  int cores = 0;
  double beta() const { return 1.0 / bandwidth_Bps; }
};

// The model as it prices one run over a buffer of buffer_bytes (the size
// nccl-tests reports): the cache term picks the bandwidth. Every path prices
// from this, so they agree to the last bit. (ranks: for the record; the
// cores term is applied per step.)
CostModel for_run(const CostModel& model, int ranks, std::size_t buffer_bytes);

struct StepCost {
  Step step = 0;
  double start_s = 0;         // sum of the earlier steps' times
  double seconds = 0;         // T_k
  double comm_s = 0;          // busiest port or link
  double reduce_s = 0;        // gamma term
  std::size_t messages = 0;
  std::size_t bytes = 0;
  std::string bottleneck;     // "send port of rank 3", "uplink of switch 1 (up)"
};

struct Prediction {
  std::vector<StepCost> steps;  // one per step 0..run.steps
  double total_s = 0;
  std::size_t size_bytes = 0;   // the size nccl-tests reports for this op
  double algbw_GBps = 0;        // size / total
  double busbw_GBps = 0;        // algbw * nccl-tests' bus factor
};

Prediction predict(const Run& run, const CostModel& model);

// The time a port is busy with `messages` messages of `bytes` bytes in all
// (messages * alpha + bytes * beta), and the time to reduce `bytes` bytes
// (gamma * bytes). Every prediction path prices through these two, so paths
// that see the same integers give the same doubles.
double port_time(const CostModel& model, std::uint64_t messages, std::uint64_t bytes);
// The bytes term alone: bytes * beta.
double bytes_time(const CostModel& model, std::uint64_t bytes);
double reduce_time(const CostModel& model, std::uint64_t bytes);

// The size nccl-tests reports (all_gather etc.: P blocks, as the collective's
// row says). The bus factor is the row's too: ringlab::bus_factor
// (primitives/collectives.hpp), 1 for a run that is not one collective.
std::size_t reported_bytes(const Run& run);
std::size_t reported_bytes(std::string_view operation, std::size_t count, DType dtype, int ranks);
// The largest size (as reported_bytes counts it) a scenario may have on the
// prediction paths: 1 TiB (2^40 bytes), the largest `ringlab bench` runs.
inline constexpr std::uint64_t kMaxScenarioBytes = std::uint64_t{1} << 40;
// Throws std::invalid_argument when the scenario's size passes
// kMaxScenarioBytes (worked out without overflow, whatever its count).
void check_reported_bytes(const Scenario& scenario);
// Fills size_bytes, algbw and busbw from total_s.
void finish_prediction(Prediction& prediction, std::string_view operation, std::size_t count,
                       DType dtype, int ranks);

}  // namespace ringlab::sim
