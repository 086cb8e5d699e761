#include "simulator/cost.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "primitives/collectives.hpp"
#include "simulator/traffic.hpp"

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

std::size_t reported_bytes(std::string_view operation, std::size_t count, DType dtype, int ranks) {
  const std::size_t block = count * element_size(dtype);
  const CollectiveInfo* collective = find_collective(operation);
  return collective ? block * collective->size_blocks(ranks) : block;
}

void check_reported_bytes(const Scenario& s) {
  const std::uint64_t per_element =
      element_size(s.dtype) * collective_info(s.collective).size_blocks(s.ranks);
  if (s.count <= kMaxScenarioBytes / per_element) return;
  throw std::invalid_argument(
      "a size of " + std::to_string(s.count) + " elements of " + std::string(dtype_name(s.dtype)) +
      (per_element > element_size(s.dtype) ? " in each of " + std::to_string(s.ranks) + " blocks"
                                           : std::string()) +
      " is more than the simulator takes: sizes up to " + std::to_string(kMaxScenarioBytes) +
      " bytes (1 TiB, kMaxScenarioBytes), at most " +
      std::to_string(kMaxScenarioBytes / per_element) + " elements here");
}

std::size_t reported_bytes(const Run& run) {
  return reported_bytes(run.operation, run.count, run.dtype, run.ranks);
}

CostModel for_run(const CostModel& model, int ranks, std::size_t buffer_bytes) {
  CostModel m = model;
  if (model.cache_bytes > 0 && model.cache_bandwidth_Bps > 0 && buffer_bytes <= model.cache_bytes)
    m.bandwidth_Bps = model.cache_bandwidth_Bps;
  (void)ranks;
  m.cache_bytes = 0;
  return m;
}

double bytes_time(const CostModel& model, std::uint64_t bytes) {
  return static_cast<double>(bytes) * model.beta();
}

double port_time(const CostModel& model, std::uint64_t messages, std::uint64_t bytes) {
  return static_cast<double>(messages) * model.alpha_s + bytes_time(model, bytes);
}

double reduce_time(const CostModel& model, std::uint64_t bytes) {
  return model.gamma_s_per_byte * static_cast<double>(bytes);
}

void finish_prediction(Prediction& p, std::string_view operation, std::size_t count, DType dtype,
                       int ranks) {
  p.size_bytes = reported_bytes(operation, count, dtype, ranks);
  p.algbw_GBps = p.busbw_GBps = 0;
  if (p.total_s > 0) {
    p.algbw_GBps = static_cast<double>(p.size_bytes) / p.total_s / 1e9;
    p.busbw_GBps = p.algbw_GBps * ringlab::bus_factor(operation, ranks);
  }
}

namespace {

// Messages and bytes per resource within one step; only touched entries are
// reset.
class Loads {
 public:
  explicit Loads(std::size_t n) : messages_(n, 0), bytes_(n, 0) {}
  void add(std::size_t i, std::uint64_t bytes) {
    if (messages_[i] == 0) touched_.push_back(i);
    ++messages_[i];
    bytes_[i] += bytes;
  }
  // (time, index) of the busiest port (time: port_time); clears everything.
  std::pair<double, std::size_t> take_busiest_port(const CostModel& model) {
    std::pair<double, std::size_t> best{0.0, 0};
    for (std::size_t i : touched_) {
      const double t = port_time(model, messages_[i], bytes_[i]);
      if (t > best.first) best = {t, i};
      messages_[i] = bytes_[i] = 0;
    }
    touched_.clear();
    return best;
  }
  // Half duplex: (time, rank) of the busiest rank, whose send port 2r and
  // receive port 2r+1 share its bandwidth; clears everything.
  std::pair<double, std::size_t> take_busiest_rank(const CostModel& model) {
    std::pair<double, std::size_t> best{0.0, 0};
    for (std::size_t i : touched_) {
      const std::size_t out = i & ~std::size_t{1}, in = out + 1;
      if (messages_[out] + messages_[in] == 0) continue;  // this rank's other port did it
      const double t =
          static_cast<double>(std::max(messages_[out], messages_[in])) * model.alpha_s +
          bytes_time(model, bytes_[out] + bytes_[in]);
      if (t > best.first) best = {t, out / 2};
      messages_[out] = messages_[in] = bytes_[out] = bytes_[in] = 0;
    }
    touched_.clear();
    return best;
  }
  // (time, index) of the busiest link (bytes only, at `beta` per byte).
  std::pair<double, std::size_t> take_busiest_link(double beta) {
    std::pair<double, std::size_t> best{0.0, 0};
    for (std::size_t i : touched_) {
      const double t = static_cast<double>(bytes_[i]) * beta;
      if (t > best.first) best = {t, i};
      messages_[i] = bytes_[i] = 0;
    }
    touched_.clear();
    return best;
  }

 private:
  std::vector<std::uint64_t> messages_, bytes_;
  std::vector<std::size_t> touched_;
};

// Prices one step at a time: add its messages, then finish() it.
class StepPricer {
 public:
  StepPricer(const CostModel& model, int ranks)
      : model_(model),
        P_(static_cast<std::size_t>(std::max(ranks, 1))),
        per_switch_(static_cast<std::size_t>(std::max(model.ranks_per_switch, 1))),
        uplink_beta_(1.0 / (model.uplink_bandwidth_Bps > 0 ? model.uplink_bandwidth_Bps
                                                           : model.bandwidth_Bps)),
        ports_(2 * P_),
        links_(2 * P_),
        uplinks_(2 * ((P_ + per_switch_ - 1) / per_switch_)),
        busy_(P_, false) {
    if (model.bandwidth_Bps <= 0) throw std::invalid_argument("bandwidth must be positive");
  }

  // Port index: 2r = send port of r, 2r+1 = receive port. Ring link index:
  // 2i = i -> i+1, 2i+1 = i+1 -> i. Uplink index: 2s = up, 2s+1 = down.
  void add(std::size_t src, std::size_t dst, std::uint64_t bytes) {
    ++messages_;
    bytes_ += bytes;
    if (model_.cores > 0) {
      for (std::size_t r : {src, dst})
        if (!busy_[r]) {
          busy_[r] = true;
          busy_ranks_.push_back(r);
        }
    }
    ports_.add(2 * src, bytes);
    ports_.add(2 * dst + 1, bytes);
    if (model_.topology == Topology::Ring && P_ > 1) {
      const std::size_t forward = (dst + P_ - src) % P_;
      const bool clockwise = forward <= P_ - forward;
      const std::size_t hops = clockwise ? forward : P_ - forward;
      max_hops_ = std::max(max_hops_, hops);
      for (std::size_t h = 0; h < hops; ++h) {
        if (clockwise)
          links_.add(2 * ((src + h) % P_), bytes);
        else
          links_.add(2 * ((src + P_ - h - 1) % P_) + 1, bytes);
      }
    } else if (model_.topology == Topology::Switch) {
      const std::size_t s_src = src / per_switch_, s_dst = dst / per_switch_;
      if (s_src != s_dst) {
        uplinks_.add(2 * s_src, bytes);
        uplinks_.add(2 * s_dst + 1, bytes);
      }
    }
  }

  // The step's cost; most_reduced: the most bytes one rank reduced in it.
  StepCost finish(Step k, double start_s, std::uint64_t most_reduced) {
    StepCost cost;
    cost.step = k;
    cost.start_s = start_s;
    cost.messages = messages_;
    cost.bytes = bytes_;
    // The cores term: k busy ranks on fewer cores move each byte k / cores
    // times as long.
    double share = 1;
    if (model_.cores > 0 && busy_ranks_.size() > static_cast<std::size_t>(model_.cores))
      share = static_cast<double>(busy_ranks_.size()) / model_.cores;
    for (std::size_t r : busy_ranks_) busy_[r] = false;
    busy_ranks_.clear();
    CostModel shared = model_;
    shared.bandwidth_Bps /= share;
    shared.uplink_bandwidth_Bps /= share;
    shared.gamma_s_per_byte *= share;
    const CostModel& m = share == 1 ? model_ : shared;
    const auto [port_time, port] =
        m.full_duplex ? ports_.take_busiest_port(m) : ports_.take_busiest_rank(m);
    const auto [link_time, link] = links_.take_busiest_link(m.beta());
    const auto [uplink_time, uplink] = uplinks_.take_busiest_link(uplink_beta_ * share);
    cost.comm_s = port_time;
    if (port_time > 0)
      cost.bottleneck = !model_.full_duplex
                            ? "rank " + std::to_string(port) + " (sends and receives)"
                            : std::string(port % 2 == 0 ? "send" : "receive") + " port of rank " +
                                  std::to_string(port / 2);
    if (link_time + model_.alpha_s > cost.comm_s && link_time > 0) {
      cost.comm_s = link_time + model_.alpha_s;
      const std::size_t i = link / 2;
      cost.bottleneck = "ring link " + std::to_string(link % 2 == 0 ? i : (i + 1) % P_) + "->" +
                        std::to_string(link % 2 == 0 ? (i + 1) % P_ : i);
    }
    if (uplink_time + model_.alpha_s > cost.comm_s && uplink_time > 0) {
      cost.comm_s = uplink_time + model_.alpha_s;
      cost.bottleneck = "uplink of switch " + std::to_string(uplink / 2) +
                        (uplink % 2 == 0 ? " (up)" : " (down)");
    }
    // Cut-through: a message crossing h ring links waits h-1 more latencies.
    if (max_hops_ > 1) cost.comm_s += model_.alpha_s * static_cast<double>(max_hops_ - 1);
    cost.reduce_s = reduce_time(m, most_reduced);
    cost.seconds = cost.comm_s + cost.reduce_s;
    messages_ = 0;
    bytes_ = 0;
    max_hops_ = 1;
    return cost;
  }

 private:
  const CostModel& model_;
  std::size_t P_, per_switch_;
  double uplink_beta_;
  Loads ports_, links_, uplinks_;
  std::vector<bool> busy_;  // ranks with a message in this step (cores term)
  std::vector<std::size_t> busy_ranks_;
  std::size_t messages_ = 0, bytes_ = 0, max_hops_ = 1;
};

}  // namespace

Prediction predict(const Run& run, const CostModel& given) {
  const CostModel model = for_run(given, run.ranks, reported_bytes(run));
  StepPricer pricer(model, run.ranks);
  std::vector<std::uint64_t> reduced(static_cast<std::size_t>(std::max(run.ranks, 1)), 0);
  std::vector<std::size_t> reduced_touched;
  Prediction out;
  double t = 0;
  for (Step k = 0; k <= run.steps; ++k) {
    for (const Message& m : run.messages_in(k))
      pricer.add(static_cast<std::size_t>(m.src), static_cast<std::size_t>(m.dst), m.bytes);
    for (const Write& w : run.writes_in(k)) {
      if (w.kind != WriteKind::Reduce) continue;
      const auto r = static_cast<std::size_t>(w.rank);
      if (reduced[r] == 0) reduced_touched.push_back(r);
      reduced[r] +=
          w.dst.count * element_size(run.regions[static_cast<std::size_t>(w.dst.region)].dtype);
    }
    std::uint64_t most_reduced = 0;
    for (std::size_t r : reduced_touched) {
      most_reduced = std::max(most_reduced, reduced[r]);
      reduced[r] = 0;
    }
    reduced_touched.clear();
    out.steps.push_back(pricer.finish(k, t, most_reduced));
    t += out.steps.back().seconds;
  }
  out.total_s = t;
  finish_prediction(out, run.operation, run.count, run.dtype, run.ranks);
  return out;
}

Prediction predict(const Traffic& traffic, const CostModel& given) {
  const CostModel model =
      for_run(given, traffic.ranks,
              reported_bytes(traffic.operation, traffic.count, traffic.dtype, traffic.ranks));
  StepPricer pricer(model, traffic.ranks);
  Prediction out;
  out.steps.reserve(static_cast<std::size_t>(traffic.steps) + 1);
  double t = 0;
  for (Step k = 0; k <= traffic.steps; ++k) {
    for (const TrafficMessage& m : traffic.messages_in(k)) pricer.add(m.src, m.dst, m.bytes);
    out.steps.push_back(pricer.finish(k, t, traffic.most_reduced[k]));
    t += out.steps.back().seconds;
  }
  out.total_s = t;
  finish_prediction(out, traffic.operation, traffic.count, traffic.dtype, traffic.ranks);
  return out;
}

}  // namespace ringlab::sim
