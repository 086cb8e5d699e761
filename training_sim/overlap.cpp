#include "training_sim/overlap.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>

#include "simulator/record.hpp"
#include "training/buckets.hpp"

namespace ringlab::training {

OverlapReport simulate_overlap(const OverlapScenario& s, const AllReduceCost& all_reduce_s) {
  if (s.parameters == 0)
    throw std::invalid_argument("ddp overlap: the model needs parameters (--params > 0)");
  if (s.layers < 1 || static_cast<std::size_t>(s.layers) > s.parameters)
    throw std::invalid_argument(
        "ddp overlap: --layers must be between 1 and the number of parameters, got " +
        std::to_string(s.layers));
  if (!(s.bucket_cap_mb >= 0 && s.bucket_cap_mb <= 1e9))
    throw std::invalid_argument("ddp overlap: --bucket-mb must be between 0 and 1e9");
  if (s.backward_s < 0) throw std::invalid_argument("ddp overlap: the backward time must be >= 0");

  // Layer sizes in the order backward produces them; the remainder of an
  // uneven split goes to the first ones.
  const auto layers = static_cast<std::size_t>(s.layers);
  std::vector<std::size_t> bytes(layers, s.parameters / layers * sizeof(float));
  for (std::size_t i = 0; i < s.parameters % layers; ++i) bytes[i] += sizeof(float);
  const auto cap = static_cast<std::size_t>(s.bucket_cap_mb * 1024 * 1024);
  const auto buckets = assign_buckets(bytes, std::min(s.first_bucket_bytes, cap), cap);

  const double total_bytes = static_cast<double>(s.parameters * sizeof(float));
  OverlapReport report;
  report.backward_s = s.backward_s;
  std::size_t produced = 0;
  double stream_free = 0;
  for (const auto& members : buckets) {
    BucketTiming t;
    for (std::size_t i : members) {
      t.bytes += bytes[i];
      produced += bytes[i];
    }
    t.tensors = static_cast<int>(members.size());
    t.ready_s = s.backward_s * static_cast<double>(produced) / total_bytes;
    t.all_reduce_s = all_reduce_s(t.bytes);
    t.start_s = std::max(t.ready_s, stream_free);
    t.end_s = t.start_s + t.all_reduce_s;
    stream_free = t.end_s;
    report.communication_s += t.all_reduce_s;
    report.buckets.push_back(t);
  }
  report.finish_s = std::max(s.backward_s, stream_free);
  return report;
}

AllReduceCost simulated_all_reduce_cost(int ranks, std::string algorithm,
                                        const sim::CostModel& model) {
  auto remembered = std::make_shared<std::map<std::size_t, double>>();
  return [=](std::size_t bytes) {
    if (auto it = remembered->find(bytes); it != remembered->end()) return it->second;
    sim::Scenario scenario;
    scenario.collective = Collective::AllReduce;
    scenario.algorithm = algorithm;
    scenario.ranks = ranks;
    scenario.count = bytes / sizeof(float);
    scenario.dtype = DType::Float32;
    scenario.values = sim::ValueMode::Off;
    const double seconds = sim::predict(sim::simulate(scenario), model).total_s;
    (*remembered)[bytes] = seconds;
    return seconds;
  };
}

}  // namespace ringlab::training
