#include "simulator/real_timings.hpp"

#include <algorithm>
#include <limits>

namespace ringlab::sim {

namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();

// ends[r][k]: when rank r's last event of step k ended (kNever: none).
std::vector<std::vector<std::int64_t>> step_ends(const RealWalkthrough& w) {
  const std::size_t steps = w.run.steps + 1;
  std::vector<std::vector<std::int64_t>> ends(w.wall_ns.size(),
                                              std::vector<std::int64_t>(steps, kNever));
  for (std::size_t r = 0; r < w.wall_ns.size() && r < w.event_steps.size(); ++r) {
    const auto& times = w.wall_ns[r];
    const auto& steps_of = w.event_steps[r];
    for (std::size_t i = 0; i < times.size() && i < steps_of.size(); ++i) {
      const Step k = std::min<Step>(steps_of[i], static_cast<Step>(steps - 1));
      ends[r][k] = std::max(ends[r][k], times[i].second);
    }
  }
  return ends;
}

}  // namespace

RunTimings real_timings(const RealWalkthrough& w, const CostModel& model) {
  RunTimings out;
  const Prediction predicted = predict(w.run, model);
  out.predicted_seconds = predicted.total_s;
  const auto ends = step_ends(w);
  const std::size_t P = ends.size();
  // Where each rank's previous step ended; the job's.
  std::vector<std::int64_t> rank_last(P, kNever);
  std::int64_t start = kNever;
  for (std::size_t r = 0; r < P; ++r)
    if (!w.wall_ns[r].empty()) {
      rank_last[r] = w.span_ns[r].first;
      start = start == kNever ? rank_last[r] : std::min(start, rank_last[r]);
    }
  std::int64_t job_last = start;
  for (Step k = 0; k <= w.run.steps; ++k) {
    StepTiming t;
    t.step = k;
    t.predicted_seconds = k < predicted.steps.size() ? predicted.steps[k].seconds : 0;
    std::int64_t job_end = kNever;
    for (std::size_t r = 0; r < P; ++r) {
      if (ends[r][k] == kNever) continue;
      if (ends[r][k] > job_end) {
        job_end = ends[r][k];
        t.slowest_rank = static_cast<int>(r);
        t.slowest_seconds = static_cast<double>(ends[r][k] - rank_last[r]) * 1e-9;
      }
      rank_last[r] = ends[r][k];
    }
    if (job_end != kNever) {
      t.measured = true;
      t.seconds = static_cast<double>(job_end - job_last) * 1e-9;
      job_last = job_end;
    }
    out.steps.push_back(t);
  }
  if (start != kNever) out.seconds = static_cast<double>(job_last - start) * 1e-9;
  return out;
}

}  // namespace ringlab::sim
