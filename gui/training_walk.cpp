// The timeline of a training step (training_walk.hpp): its ticks, the side
// panel's overlap lines, and the act. Its sentences and frames are
// training_frame.cpp's.
#include "gui/training_walk.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "gui/frame_words.hpp"
#include "gui/training_slots.hpp"
#include "training_sim/overlap.hpp"

namespace ringlab::gui {

namespace {

using training::GradientSync;
using training::RecordedStep;
using training::StepEvent;
using Compute = TrainingTick::Compute;

// Per region of the run: the bucket it holds (-1: scratch).
std::vector<int> bucket_of_region(const RecordedStep& step) {
  std::vector<int> bucket(step.run.regions.size(), -1);
  for (const training::RankRecord& rank : step.ranks)
    for (std::size_t b = 0; b < rank.bucket_regions.size(); ++b)
      if (rank.bucket_regions[b] >= 0)
        bucket[static_cast<std::size_t>(rank.bucket_regions[b])] = static_cast<int>(b);
  return bucket;
}

bool same_events(const std::vector<StepEvent>& a, const std::vector<StepEvent>& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(), [](const StepEvent& x, const StepEvent& y) {
        return x.kind == y.kind && x.index == y.index && x.after_backward == y.after_backward;
      });
}

// ---- the timeline -------------------------------------------------------------

// Compute: before, forward, then one backward tick per layer; each gradient's
// tick, and each bucket's issue (Horovod's last fusion buffer, issued by
// step(), is returned: it goes to the tick after backward).
std::vector<int> lay_out_compute(TrainingWalk& walk) {
  const RecordedStep& step = walk.step;
  const std::vector<StepEvent>& events = step.ranks.front().events;
  for (std::size_t r = 1; r < step.ranks.size(); ++r)
    if (!same_events(step.ranks[r].events, events))
      throw std::logic_error("training walkthrough: rank " + std::to_string(r) +
                             "'s backward produced its gradients in another order than rank 0's");
  walk.gradient_tick.assign(step.parameter_names.size(), -1);
  walk.issue_tick.assign(step.buckets.size(), -1);
  std::vector<TrainingTick>& ticks = walk.ticks;
  ticks.resize(2);
  ticks[1].compute = Compute::Forward;
  std::vector<int> issued_by_step;
  for (const StepEvent& event : events) {
    const auto index = static_cast<std::size_t>(event.index);
    if (event.kind == StepEvent::Kind::GradientReady) {
      const std::string layer = layer_of(step.parameter_names[index]);
      if (ticks.back().compute != Compute::Backward || ticks.back().layer != layer) {
        ticks.emplace_back();
        ticks.back().compute = Compute::Backward;
        ticks.back().layer = layer;
      }
      ticks.back().gradients.push_back(event.index);
      walk.gradient_tick[index] = static_cast<int>(ticks.size()) - 1;
    } else if (event.after_backward) {
      issued_by_step.push_back(event.index);
    } else {
      ticks.back().issued.push_back(event.index);
      walk.issue_tick[index] = static_cast<int>(ticks.size()) - 1;
    }
  }
  walk.backward_end = static_cast<int>(ticks.size()) - 1;
  for (int b : issued_by_step) walk.issue_tick[static_cast<std::size_t>(b)] = walk.backward_end + 1;
  for (std::size_t b = 0; b < walk.issue_tick.size(); ++b)
    if (walk.issue_tick[b] < 0)
      throw std::logic_error("training walkthrough: " + bucket_name(step, static_cast<int>(b)) +
                             "'s all_reduce was never issued");
  return issued_by_step;
}

// Communication: the record's steps in order, one per tick, a bucket's first
// no earlier than the tick after it was issued. Step 0 (local set-up) goes
// with step 1, as in every walkthrough. Returns each step's tick.
std::vector<int> lay_out_communication(TrainingWalk& walk) {
  const sim::Run& run = walk.step.run;
  const std::vector<int> bucket_of = bucket_of_region(walk.step);
  std::vector<std::set<int>> active(static_cast<std::size_t>(run.steps) + 1);
  auto note = [&](sim::Step k, int region) {
    if (region >= 0 && bucket_of[static_cast<std::size_t>(region)] >= 0)
      active[std::max<sim::Step>(k, 1)].insert(bucket_of[static_cast<std::size_t>(region)]);
  };
  for (const sim::Write& w : run.writes) {
    note(w.step, w.dst.region);
    note(w.step, w.src.region);
  }
  for (const sim::Message& m : run.messages) {
    note(m.step, m.from.region);
    note(m.step, m.to.region);
  }
  const std::size_t buckets = walk.step.buckets.size();
  walk.first_step.assign(buckets, sim::kNoStep);
  walk.last_step.assign(buckets, 0);
  std::vector<int> tick_of(static_cast<std::size_t>(run.steps) + 1, 1);
  for (sim::Step k = 1; k <= run.steps; ++k) {
    int tick = tick_of[k - 1] + 1;
    for (int b : active[k]) {
      const auto ub = static_cast<std::size_t>(b);
      tick = std::max(tick, walk.issue_tick[ub] + 1);
      walk.first_step[ub] = std::min(walk.first_step[ub], k);
      walk.last_step[ub] = std::max(walk.last_step[ub], k);
    }
    tick_of[k] = tick;
  }
  return tick_of;
}

std::shared_ptr<TrainingWalk> lay_out(RecordedStep recorded) {
  auto walk = std::make_shared<TrainingWalk>();
  walk->step = std::move(recorded);
  const std::vector<int> issued_by_step = lay_out_compute(*walk);
  const std::vector<int> tick_of = lay_out_communication(*walk);
  const sim::Step steps = walk->step.run.steps;
  // After backward and the communication: the final wait, the divide, the update.
  const int comm_end = steps > 0 ? tick_of[steps] : 0;
  walk->divide_tick = std::max(walk->backward_end, comm_end) + 1;
  walk->update_tick = walk->divide_tick + 1;
  std::vector<TrainingTick>& ticks = walk->ticks;
  ticks.resize(static_cast<std::size_t>(walk->update_tick) + 1);
  for (int t = walk->backward_end + 1; t < walk->divide_tick; ++t)
    ticks[static_cast<std::size_t>(t)].compute = Compute::FinalWait;
  ticks[static_cast<std::size_t>(walk->divide_tick)].compute = Compute::Divide;
  ticks[static_cast<std::size_t>(walk->update_tick)].compute = Compute::Update;
  for (int b : issued_by_step)
    ticks[static_cast<std::size_t>(walk->backward_end) + 1].issued.push_back(b);
  for (sim::Step k = 1; k <= steps; ++k) {
    TrainingTick& tick = ticks[static_cast<std::size_t>(tick_of[k])];
    tick.shown_step = k;
    tick.step_runs = true;
    if (tick_of[k] <= walk->backward_end) ++walk->steps_during_backward;
  }
  for (std::size_t t = 1; t < ticks.size(); ++t)
    if (!ticks[t].step_runs) ticks[t].shown_step = ticks[t - 1].shown_step;
  return walk;
}

// "10.00 of 20.00 us", or "980.00 us of 1.234 ms" where the units differ.
std::string part_of(double part_s, double whole_s) {
  const std::string part = seconds_text(part_s);
  const std::string whole = seconds_text(whole_s);
  const std::size_t unit = part.rfind(' ');
  if (part.substr(unit) == whole.substr(whole.rfind(' ')))
    return part.substr(0, unit) + " of " + whole;
  return part + " of " + whole;
}

// The side panel's answer to "how much of the all_reduce hides behind
// backward", as drawn and from the overlap model with this run's costs.
std::vector<std::string> overlap_lines(const TrainingWalk& walk,
                                       const sim::Prediction& prediction) {
  const RecordedStep& step = walk.step;
  const sim::Run& run = step.run;
  std::vector<std::string> lines;
  lines.push_back("as drawn: " + std::to_string(walk.steps_during_backward) + " of " +
                  std::to_string(run.steps) +
                  " message steps beside backward (a layer's backward as long as a step)");
  if (!is_ddp(step)) {
    lines.push_back(
        "Horovod issues a fusion buffer once it reaches the threshold or the next gradient would "
        "not fit; the last one waits for step(), so none of it hides");
    return lines;
  }
  if (run.steps == 0 || walk.first_step.empty()) return lines;
  // One layer's backward as long as one step of the run, as drawn.
  const double layer_s = prediction.steps.at(walk.first_step.front()).seconds;
  const auto layers = static_cast<int>(step.parameter_names.size());
  std::size_t parameters = 0;
  for (std::size_t n : step.parameter_sizes) parameters += n;
  const training::AllReduceCost cost =
      training::simulated_all_reduce_cost(run.ranks, step.scenario.algorithm, gui_cost_model());
  const double backward_s = layer_s * layers;
  lines.push_back("overlap model, " + std::to_string(layers) + " layers, backward " +
                  seconds_text(backward_s) + ":");
  std::vector<std::size_t> caps{parameters / static_cast<std::size_t>(layers), parameters / 2,
                                parameters, step.scenario.bucket_floats};
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  for (std::size_t cap : caps) {
    training::OverlapScenario scenario;
    scenario.parameters = parameters;
    scenario.layers = layers;
    scenario.bucket_cap_mb = static_cast<double>(cap * sizeof(float)) / (1024.0 * 1024.0);
    scenario.first_bucket_bytes = cap * sizeof(float);
    scenario.backward_s = backward_s;
    const training::OverlapReport report = training::simulate_overlap(scenario, cost);
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.0f%%", 100 * report.hidden_fraction());
    lines.push_back("cap " + std::to_string(cap) + ": " + std::to_string(report.buckets.size()) +
                    (report.buckets.size() == 1 ? " bucket hides " : " buckets hide ") +
                    part_of(report.hidden_s(), report.communication_s) + " (" + percent + ")" +
                    (cap == step.scenario.bucket_floats ? "  <- this run" : ""));
  }
  return lines;
}

}  // namespace

// ---- the act -------------------------------------------------------------------

Act record_training_act(const Settings& settings) {
  training::StepScenario scenario;
  scenario.sync = settings.primitive == kDdpStep ? GradientSync::Ddp : GradientSync::Horovod;
  scenario.ranks = settings.ranks;
  scenario.bucket_floats = static_cast<std::size_t>(settings.elements);
  scenario.algorithm = settings.algorithm.empty() ? "ring" : settings.algorithm;
  Act act;
  std::shared_ptr<TrainingWalk> walk = lay_out(training::record_training_step(scenario));
  act.run = walk->step.run;
  act.prediction = sim::predict(act.run, gui_cost_model());
  walk->overlap_lines = overlap_lines(*walk, act.prediction);
  const std::size_t buckets = walk->step.buckets.size();
  // Short enough for the smallest window: the sentence says the rest.
  act.title =
      (is_ddp(walk->step)
           ? "DistributedDataParallel step (" + scenario.algorithm + ", " +
                 std::to_string(buckets) + (buckets == 1 ? " bucket" : " buckets") + ", cap " +
                 std::to_string(scenario.bucket_floats) + ")"
           : "Horovod optimizer step (" + scenario.algorithm + ", " + std::to_string(buckets) +
                 (buckets == 1 ? " fusion buffer" : " fusion buffers") + ", threshold " +
                 std::to_string(scenario.bucket_floats) + ")");
  act.training = std::move(walk);
  return act;
}

}  // namespace ringlab::gui
