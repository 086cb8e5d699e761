#include "simulator/cost.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "primitives/collectives.hpp"

namespace ringlab::sim {

std::string_view topology_name(Topology t) {
  switch (t) {
    case Topology::FullyConnected: return "fully_connected";
    case Topology::Ring: return "ring";
    case Topology::Switch: return "switch";
  }
  return "?";
}

Topology parse_topology(std::string_view name) {
  if (name == "fully_connected" || name == "full") return Topology::FullyConnected;
  if (name == "ring") return Topology::Ring;
  if (name == "switch") return Topology::Switch;
  throw std::invalid_argument("unknown topology '" + std::string(name) +
                              "': use fully_connected, ring or switch");
}

std::size_t reported_bytes(const Run& run) {
  const std::size_t block = run.count * element_size(run.dtype);
  const CollectiveInfo* collective = find_collective(run.operation);
  return collective ? block * collective->size_blocks(run.ranks) : block;
}

namespace {

// Busy time per resource within one step; only touched entries are reset.
class Resources {
 public:
  explicit Resources(std::size_t n) : busy_(n, 0.0) {}
  void add(std::size_t i, double t) {
    if (busy_[i] == 0.0) touched_.push_back(i);
    busy_[i] += t;
  }
  // (time, index) of the busiest; clears everything.
  std::pair<double, std::size_t> take_max() {
    std::pair<double, std::size_t> best{0.0, 0};
    for (std::size_t i : touched_) {
      if (busy_[i] > best.first) best = {busy_[i], i};
      busy_[i] = 0.0;
    }
    touched_.clear();
    return best;
  }

 private:
  std::vector<double> busy_;
  std::vector<std::size_t> touched_;
};

}  // namespace

Prediction predict(const Run& run, const CostModel& model) {
  if (model.bandwidth_Bps <= 0) throw std::invalid_argument("bandwidth must be positive");
  const auto P = static_cast<std::size_t>(std::max(run.ranks, 1));
  const double beta = model.beta();
  const int per_switch = std::max(model.ranks_per_switch, 1);
  const double uplink_beta =
      1.0 / (model.uplink_bandwidth_Bps > 0 ? model.uplink_bandwidth_Bps : model.bandwidth_Bps);
  const std::size_t switches = (P + static_cast<std::size_t>(per_switch) - 1) / static_cast<std::size_t>(per_switch);

  // Port index: 2r = send port of r, 2r+1 = receive port. Ring link index:
  // 2i = i -> i+1, 2i+1 = i+1 -> i. Uplink index: 2s = up, 2s+1 = down.
  Resources ports(2 * P), links(2 * P), uplinks(2 * switches);
  std::vector<double> reduced(P, 0.0);
  std::vector<std::size_t> reduced_touched;

  Prediction out;
  double t = 0;
  for (Step k = 0; k <= run.steps; ++k) {
    StepCost cost;
    cost.step = k;
    cost.start_s = t;
    int max_hops = 1;
    for (const Message& m : run.messages_in(k)) {
      ++cost.messages;
      cost.bytes += m.bytes;
      const double b = static_cast<double>(m.bytes);
      const auto src = static_cast<std::size_t>(m.src), dst = static_cast<std::size_t>(m.dst);
      ports.add(2 * src, model.alpha_s + b * beta);
      ports.add(2 * dst + 1, model.alpha_s + b * beta);
      if (model.topology == Topology::Ring && P > 1) {
        const std::size_t forward = (dst + P - src) % P;
        const bool clockwise = forward <= P - forward;
        const std::size_t hops = clockwise ? forward : P - forward;
        max_hops = std::max(max_hops, static_cast<int>(hops));
        for (std::size_t h = 0; h < hops; ++h) {
          if (clockwise) links.add(2 * ((src + h) % P), b * beta);
          else links.add(2 * ((src + P - h - 1) % P) + 1, b * beta);
        }
      } else if (model.topology == Topology::Switch) {
        const std::size_t s_src = src / static_cast<std::size_t>(per_switch);
        const std::size_t s_dst = dst / static_cast<std::size_t>(per_switch);
        if (s_src != s_dst) {
          uplinks.add(2 * s_src, b * uplink_beta);
          uplinks.add(2 * s_dst + 1, b * uplink_beta);
        }
      }
    }
    for (const Write& w : run.writes_in(k)) {
      if (w.kind != WriteKind::Reduce) continue;
      const auto r = static_cast<std::size_t>(w.rank);
      if (reduced[r] == 0.0) reduced_touched.push_back(r);
      reduced[r] += static_cast<double>(w.dst.count *
                                        element_size(run.regions[static_cast<std::size_t>(w.dst.region)].dtype));
    }
    double most_reduced = 0;
    for (std::size_t r : reduced_touched) {
      most_reduced = std::max(most_reduced, reduced[r]);
      reduced[r] = 0.0;
    }
    reduced_touched.clear();

    const auto [port_time, port] = ports.take_max();
    const auto [link_time, link] = links.take_max();
    const auto [uplink_time, uplink] = uplinks.take_max();
    cost.comm_s = port_time;
    if (port_time > 0)
      cost.bottleneck = std::string(port % 2 == 0 ? "send" : "receive") + " port of rank " +
                        std::to_string(port / 2);
    if (link_time + model.alpha_s > cost.comm_s && link_time > 0) {
      cost.comm_s = link_time + model.alpha_s;
      const std::size_t i = link / 2;
      cost.bottleneck = "ring link " + std::to_string(link % 2 == 0 ? i : (i + 1) % P) + "->" +
                        std::to_string(link % 2 == 0 ? (i + 1) % P : i);
    }
    if (uplink_time + model.alpha_s > cost.comm_s && uplink_time > 0) {
      cost.comm_s = uplink_time + model.alpha_s;
      cost.bottleneck = "uplink of switch " + std::to_string(uplink / 2) +
                        (uplink % 2 == 0 ? " (up)" : " (down)");
    }
    // Cut-through: a message crossing h ring links waits h-1 more latencies.
    if (cost.messages > 0) cost.comm_s += model.alpha_s * (max_hops - 1);
    cost.reduce_s = model.gamma_s_per_byte * most_reduced;
    cost.seconds = cost.comm_s + cost.reduce_s;
    t += cost.seconds;
    out.steps.push_back(std::move(cost));
  }
  out.total_s = t;
  out.size_bytes = reported_bytes(run);
  if (t > 0) {
    out.algbw_GBps = static_cast<double>(out.size_bytes) / t / 1e9;
    out.busbw_GBps = out.algbw_GBps * ringlab::bus_factor(run.operation, run.ranks);
  }
  return out;
}

}  // namespace ringlab::sim
