#include "gui/training_walk.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "primitives/comm.hpp"
#include "training_sim/overlap.hpp"

namespace ringlab::gui {

namespace {

using training::GradientSync;
using training::RecordedStep;
using training::StepEvent;
using Compute = TrainingTick::Compute;

bool is_ddp(const RecordedStep& step) { return step.scenario.sync == GradientSync::Ddp; }

std::string bucket_name(const RecordedStep& step, int bucket) {
  return training::bucket_region_name(step.scenario.sync, bucket);
}

// "net4" of "net4.weight".
std::string layer_of(const std::string& parameter) {
  return parameter.substr(0, parameter.find('.'));
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string seconds_text(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  else
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

std::string list_text(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return text;
}

// float32 values as the articles print a tensor: tensor([1., 2.]).
std::string printed(const std::vector<float>& values) {
  Tensor tensor(DType::Float32, {static_cast<std::int64_t>(values.size())});
  std::copy(values.begin(), values.end(), tensor.data<float>().begin());
  return tensor.to_string();
}

// Per region of the run: the bucket it holds (-1: scratch).
std::vector<int> bucket_of_region(const RecordedStep& step) {
  std::vector<int> bucket(step.run.regions.size(), -1);
  for (const training::RankRecord& rank : step.ranks)
    for (std::size_t b = 0; b < rank.bucket_regions.size(); ++b)
      if (rank.bucket_regions[b] >= 0)
        bucket[static_cast<std::size_t>(rank.bucket_regions[b])] = static_cast<int>(b);
  return bucket;
}

// Per parameter: its bucket and where it starts in the bucket.
struct Slot {
  int bucket = -1;
  std::size_t offset = 0;
};
std::vector<Slot> slots_of(const RecordedStep& step) {
  std::vector<Slot> slots(step.parameter_names.size());
  for (std::size_t b = 0; b < step.buckets.size(); ++b)
    for (std::size_t s = 0; s < step.buckets[b].parameters.size(); ++s)
      slots[static_cast<std::size_t>(step.buckets[b].parameters[s])] = {static_cast<int>(b),
                                                                        step.buckets[b].offsets[s]};
  return slots;
}

bool same_events(const std::vector<StepEvent>& a, const std::vector<StepEvent>& b) {
  return std::equal(
      a.begin(), a.end(), b.begin(), b.end(), [](const StepEvent& x, const StepEvent& y) {
        return x.kind == y.kind && x.index == y.index && x.after_backward == y.after_backward;
      });
}

// ---- the timeline -------------------------------------------------------------

std::shared_ptr<TrainingWalk> lay_out(RecordedStep recorded) {
  auto walk = std::make_shared<TrainingWalk>();
  walk->step = std::move(recorded);
  const RecordedStep& step = walk->step;
  const std::vector<StepEvent>& events = step.ranks.front().events;
  for (std::size_t r = 1; r < step.ranks.size(); ++r)
    if (!same_events(step.ranks[r].events, events))
      throw std::logic_error("training walkthrough: rank " + std::to_string(r) +
                             "'s backward produced its gradients in another order than rank 0's");
  const std::size_t buckets = step.buckets.size();
  walk->gradient_tick.assign(step.parameter_names.size(), -1);
  walk->issue_tick.assign(buckets, -1);

  // Compute: before, forward, then one backward tick per layer.
  std::vector<TrainingTick>& ticks = walk->ticks;
  ticks.resize(2);
  ticks[1].compute = Compute::Forward;
  std::vector<int> issued_by_step;  // Horovod's last fusion buffer
  for (const StepEvent& event : events) {
    if (event.kind == StepEvent::Kind::GradientReady) {
      const std::string layer =
          layer_of(step.parameter_names[static_cast<std::size_t>(event.index)]);
      if (ticks.back().compute != Compute::Backward || ticks.back().layer != layer) {
        ticks.emplace_back();
        ticks.back().compute = Compute::Backward;
        ticks.back().layer = layer;
      }
      ticks.back().gradients.push_back(event.index);
      walk->gradient_tick[static_cast<std::size_t>(event.index)] =
          static_cast<int>(ticks.size()) - 1;
    } else if (event.after_backward) {
      issued_by_step.push_back(event.index);
    } else {
      ticks.back().issued.push_back(event.index);
      walk->issue_tick[static_cast<std::size_t>(event.index)] = static_cast<int>(ticks.size()) - 1;
    }
  }
  walk->backward_end = static_cast<int>(ticks.size()) - 1;
  for (int b : issued_by_step)
    walk->issue_tick[static_cast<std::size_t>(b)] = walk->backward_end + 1;
  for (std::size_t b = 0; b < buckets; ++b)
    if (walk->issue_tick[b] < 0)
      throw std::logic_error("training walkthrough: " + bucket_name(step, static_cast<int>(b)) +
                             "'s all_reduce was never issued");

  // Communication: the record's steps in order, one per tick, a bucket's
  // first no earlier than the tick after it was issued. Step 0 (local set-up)
  // goes with step 1, as in every walkthrough.
  const sim::Run& run = step.run;
  const std::vector<int> bucket_of = bucket_of_region(step);
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
  walk->first_step.assign(buckets, sim::kNoStep);
  walk->last_step.assign(buckets, 0);
  std::vector<int> tick_of(static_cast<std::size_t>(run.steps) + 1, 1);
  for (sim::Step k = 1; k <= run.steps; ++k) {
    int tick = tick_of[k - 1] + 1;
    for (int b : active[k]) {
      const auto ub = static_cast<std::size_t>(b);
      tick = std::max(tick, walk->issue_tick[ub] + 1);
      walk->first_step[ub] = std::min(walk->first_step[ub], k);
      walk->last_step[ub] = std::max(walk->last_step[ub], k);
    }
    tick_of[k] = tick;
  }
  const int comm_end = run.steps > 0 ? tick_of[run.steps] : 0;
  walk->divide_tick = std::max(walk->backward_end, comm_end) + 1;
  walk->update_tick = walk->divide_tick + 1;
  ticks.resize(static_cast<std::size_t>(walk->update_tick) + 1);
  for (int t = walk->backward_end + 1; t < walk->divide_tick; ++t)
    ticks[static_cast<std::size_t>(t)].compute = Compute::FinalWait;
  ticks[static_cast<std::size_t>(walk->divide_tick)].compute = Compute::Divide;
  ticks[static_cast<std::size_t>(walk->update_tick)].compute = Compute::Update;
  for (int b : issued_by_step)
    ticks[static_cast<std::size_t>(walk->backward_end) + 1].issued.push_back(b);
  for (sim::Step k = 1; k <= run.steps; ++k) {
    TrainingTick& tick = ticks[static_cast<std::size_t>(tick_of[k])];
    tick.shown_step = k;
    tick.step_runs = true;
    if (tick_of[k] <= walk->backward_end) ++walk->steps_during_backward;
  }
  for (std::size_t t = 1; t < ticks.size(); ++t)
    if (!ticks[t].step_runs) ticks[t].shown_step = ticks[t - 1].shown_step;
  return walk;
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
                  " message steps run while backward computes (a layer's backward drawn as "
                  "long as one step)");
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
  lines.push_back("overlap model (training_sim/overlap.hpp), " + std::to_string(layers) +
                  " layers, backward " + seconds_text(backward_s) + ":");
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
    lines.push_back("cap " + std::to_string(cap) + " (" + std::to_string(cap * sizeof(float)) +
                    " B): " + std::to_string(report.buckets.size()) +
                    (report.buckets.size() == 1 ? " bucket, " : " buckets, ") +
                    seconds_text(report.hidden_s()) + " of " +
                    seconds_text(report.communication_s) + " hidden (" + percent + ")" +
                    (cap == step.scenario.bucket_floats ? "  <- this run" : ""));
  }
  return lines;
}

// ---- words ---------------------------------------------------------------------

// A message's range as the walkthrough names it: "chunk 1 of bucket 0".
std::string where(const sim::Run& run, const sim::Location& location) {
  if (location.count == 0) return "an empty chunk";
  if (location.region < 0)
    return "bytes [" + std::to_string(location.offset) + ", " +
           std::to_string(location.offset + location.count) + ")";
  const sim::Region& region = run.regions[static_cast<std::size_t>(location.region)];
  if (location.offset == 0 && location.count == region.count) return "all of " + region.name;
  const std::vector<Chunk> chunks = split_even(region.count, run.ranks);
  for (std::size_t c = 0; c < chunks.size(); ++c)
    if (chunks[c].offset == location.offset && chunks[c].count == location.count)
      return "chunk " + std::to_string(c) + " of " + region.name;
  return "elements [" + std::to_string(location.offset) + ", " +
         std::to_string(location.offset + location.count) + ") of " + region.name;
}

std::string carried(const sim::Run& run, const sim::Message& message) {
  sim::RankSet all;
  for (const sim::ProvRun& part : run.runs(message.payload)) all = all.unite(run.set(part.set));
  return provenance_text(run, all);
}

std::string message_clause(const sim::Run& run, const sim::Message& m) {
  const std::string src = "rank " + std::to_string(m.src);
  const std::string dst = "rank " + std::to_string(m.dst);
  if (m.bytes == 0) return src + " sends " + dst + " an empty chunk";
  std::string clause = src + " sends " + where(run, m.from) + " to " + dst;
  if (m.reduced) return clause + ", which " + op_verb(m.reduce_op);
  if (m.to.region >= 0 &&
      run.regions[static_cast<std::size_t>(m.to.region)].kind == sim::RegionKind::Scratch)
    return clause + ", which receives it into its " +
           run.regions[static_cast<std::size_t>(m.to.region)].name;
  const std::string landing = where(run, m.to);
  if (landing.rfind("all of ", 0) == 0)
    return clause + ", which stores it in its " + landing.substr(7);
  return clause + ", which stores it as its " + landing;
}

// What the communication lane does in record step k.
std::string comm_clause(const TrainingWalk& walk, sim::Step k) {
  const RecordedStep& step = walk.step;
  const sim::Run& run = step.run;
  std::string clause;
  for (std::size_t b = 0; b < step.buckets.size(); ++b) {
    if (walk.first_step[b] > k || walk.last_step[b] < k) continue;
    const sim::Step steps = walk.last_step[b] - walk.first_step[b] + 1;
    clause += (clause.empty() ? "" : " and ") + bucket_name(step, static_cast<int>(b)) +
              "'s all_reduce, step " + std::to_string(k - walk.first_step[b] + 1) + " of " +
              std::to_string(steps);
  }
  clause += " (" + phase_name(run, k) + ")";
  std::vector<sim::Message> messages(run.messages_in(k).begin(), run.messages_in(k).end());
  std::stable_partition(messages.begin(), messages.end(),
                        [](const sim::Message& m) { return m.bytes > 0; });
  if (messages.empty()) return clause + ": ranks work on their own buffers";
  // One message in words (the side panel lists them all): the sentence
  // also tells what the compute lane does.
  clause += ": " + message_clause(run, messages.front());
  if (messages.size() > 1)
    clause += "; " + std::to_string(messages.size() - 1) +
              (messages.size() == 2 ? " more message" : " more messages") + " at the same time";
  return clause;
}

std::string losses_text(const RecordedStep& step) {
  std::vector<std::string> losses;
  for (std::size_t r = 0; r < step.ranks.size(); ++r)
    losses.push_back(number(step.ranks[r].loss) + " on rank " + std::to_string(r));
  return list_text(losses);
}

// The rank's line under its title: its batch, then its loss and what its
// compute lane does.
std::string rank_line(const TrainingWalk& walk, const TrainingTick& tick, int rank) {
  const RecordedStep& step = walk.step;
  const training::RankRecord& record = step.ranks[static_cast<std::size_t>(rank)];
  // The box's title names the rank.
  if (tick.compute == Compute::Before) {
    auto values = [](const std::vector<float>& v) {
      std::string text;
      for (float x : v) text += (text.empty() ? "" : ", ") + number(x);
      return "[" + text + "]";
    };
    return "batch x = " + values(record.inputs) + ", targets y = " + values(record.targets);
  }
  std::string line = "loss " + number(record.loss);
  switch (tick.compute) {
    case Compute::Before:
    case Compute::Forward:
      break;
    case Compute::Backward:
      line += ", backward of " + tick.layer;
      break;
    case Compute::FinalWait:
      line += is_ddp(step) ? ", the final wait" : ", step(): synchronize()";
      break;
    case Compute::Divide:
      line += ", .grad = sum / " + std::to_string(step.ranks.size());
      break;
    case Compute::Update:
      line += ", parameters -= " + number(step.lr) + " .grad";
      break;
  }
  return line;
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

std::string training_sentence(const Act& act, int t) {
  const TrainingWalk& walk = *act.training;
  const RecordedStep& step = walk.step;
  const TrainingTick& tick = walk.ticks.at(static_cast<std::size_t>(t));
  const bool ddp = is_ddp(step);
  const std::size_t world = step.ranks.size();
  const std::string total = std::to_string(walk.ticks.size() - 1);
  if (tick.compute == Compute::Before)
    return act.title + ", before step 1: " +
           (ddp ? "DistributedDataParallel's constructor broadcast rank 0's parameters"
                : "hvd.broadcast_parameters sent rank 0's parameters") +
           ", so every rank starts from the same ones; each rank holds its own batch of " +
           std::to_string(step.ranks.front().inputs.size()) + " samples";
  std::string sentence = "step " + std::to_string(t) + " of " + total + ", ";
  const std::vector<Slot> slots = slots_of(step);
  switch (tick.compute) {
    case Compute::Before:
      break;
    case Compute::Forward:
      sentence += "forward: every rank runs the model on its own batch and computes its loss";
      if (world <= 4) sentence += " (" + losses_text(step) + ")";
      break;
    case Compute::Backward: {
      sentence += "backward of " + tick.layer;
      if (t == 2) sentence += " (the last layer first)";
      std::vector<std::string> names;
      for (int p : tick.gradients)
        names.push_back(step.parameter_names[static_cast<std::size_t>(p)]);
      const int bucket = slots[static_cast<std::size_t>(tick.gradients.front())].bucket;
      sentence += ": the gradient of " + list_text(names) + (ddp ? " is copied into " : " joins ") +
                  bucket_name(step, bucket);
      for (int b : tick.issued)
        sentence += "; " + bucket_name(step, b) +
                    (ddp ? " is full: its all_reduce is issued and runs while backward goes on"
                         : " reached the fusion threshold: its all_reduce is issued");
      if (tick.step_runs)
        sentence += "; meanwhile " + comm_clause(walk, static_cast<sim::Step>(tick.shown_step)) +
                    ", hidden behind backward";
      break;
    }
    case Compute::FinalWait:
      sentence += ddp ? "the final wait: backward is done, and DDP waits for the all_reduces"
                      : "optimizer.step() calls synchronize(), which waits for the all_reduces";
      for (int b : tick.issued)
        sentence += "; it issues " + bucket_name(step, b) + ", still under the threshold";
      if (tick.step_runs)
        sentence += "; " + comm_clause(walk, static_cast<sim::Step>(tick.shown_step)) +
                    ", exposed: no backward left to hide it";
      break;
    case Compute::Divide:
      sentence +=
          ddp ? "DDP divides each bucket by the world size (" + std::to_string(world) +
                    ") and copies the averages into .grad: every rank holds the gradient "
                    "averaged over all ranks' samples"
              : "synchronize() writes each fusion buffer divided by size() (" +
                    std::to_string(world) +
                    ") into .grad, Horovod's Average: every rank holds the gradient averaged over "
                    "all ranks' samples";
      break;
    case Compute::Update:
      sentence += "optimizer.step(): SGD subtracts " + number(step.lr) +
                  (ddp ? std::string()
                       : " (the learning rate " + number(step.scenario.lr) +
                             " times size(), as seed 003 scales it)") +
                  " x .grad; the same averaged gradient gives the same update on every rank, so "
                  "the parameters stay identical everywhere";
      break;
  }
  return sentence;
}

// ---- the frame -----------------------------------------------------------------

FrameView build_training_frame(const Act& act, int t, const std::string& sentence) {
  const TrainingWalk& walk = *act.training;
  const RecordedStep& step = walk.step;
  const sim::Run& run = step.run;
  const TrainingTick& tick = walk.ticks.at(static_cast<std::size_t>(t));
  const bool ddp = is_ddp(step);
  const std::vector<Slot> slots = slots_of(step);
  FrameView view;
  view.training = true;
  view.act_title = act.title;
  view.position =
      t == 0 ? "before step 1"
             : "step " + std::to_string(t) + " of " + std::to_string(walk.ticks.size() - 1);
  view.sentence = sentence;
  view.overlap_lines = walk.overlap_lines;

  sim::Replay replay(run);
  if (tick.shown_step >= 0) replay.seek(static_cast<sim::Step>(tick.shown_step));
  sim::Replay final_state(run);
  final_state.seek(run.steps);
  const auto k = static_cast<sim::Step>(std::max<long long>(tick.shown_step, 0));

  // What this tick's record step writes and reads (step 1 also shows step 0).
  std::set<int> written, read;
  if (tick.step_runs) {
    for (sim::Step s = k == 1 ? 0 : k; s <= k; ++s)
      for (const sim::Write& w : run.writes_in(s)) written.insert(w.dst.region);
    for (const sim::Message& m : run.messages_in(k)) read.insert(m.from.region);
  }

  for (int rank = 0; rank < run.ranks; ++rank) {
    const training::RankRecord& record = step.ranks[static_cast<std::size_t>(rank)];
    view.legend.push_back("r" + std::to_string(rank));
    RankPanel panel;
    panel.rank = rank;
    panel.role = "rank " + std::to_string(rank);
    panel.line = rank_line(walk, tick, rank);

    // The parameters, in the model's order; after the update they hold
    // every rank's data, through the averaged gradient.
    {
      BufferView buffer;
      buffer.name = buffer.label = "parameters";
      buffer.changed = tick.compute == Compute::Update;
      const training::Values& values = buffer.changed ? record.after : record.before;
      std::vector<float> flat;
      for (std::size_t p = 0; p < values.size(); ++p)
        for (std::size_t i = 0; i < values[p].size(); ++i) {
          sim::RankSet provenance;
          const Slot& slot = slots[p];
          if (buffer.changed && slot.bucket >= 0) {
            const int region = record.bucket_regions[static_cast<std::size_t>(slot.bucket)];
            if (region >= 0) provenance = final_state.provenance_at(region, slot.offset + i);
          }
          buffer.cells.push_back({number(values[p][i]), provenance});
          flat.push_back(values[p][i]);
        }
      buffer.printed = printed(flat);
      buffer.block = buffer.cells.size();
      panel.buffers.push_back(std::move(buffer));
    }

    for (std::size_t b = 0; b < step.buckets.size(); ++b) {
      const training::GradientBucket& bucket = step.buckets[b];
      const int region = record.bucket_regions[b];
      BufferView buffer;
      buffer.name = bucket_name(step, static_cast<int>(b));
      std::vector<std::string> layers;
      for (int p : bucket.parameters)
        layers.push_back(layer_of(step.parameter_names[static_cast<std::size_t>(p)]));
      buffer.label = buffer.name + " (";
      for (std::size_t i = 0; i < layers.size(); ++i) buffer.label += (i ? ", " : "") + layers[i];
      buffer.label += ")";
      const bool started =
          tick.shown_step >= 0 && walk.first_step[b] <= static_cast<sim::Step>(tick.shown_step);
      const bool divided = ddp && t >= walk.divide_tick;
      std::vector<float> flat;
      for (std::size_t s = 0; s < bucket.parameters.size(); ++s) {
        const auto p = static_cast<std::size_t>(bucket.parameters[s]);
        const bool produced = walk.gradient_tick[p] <= t;
        if (tick.compute == Compute::Backward &&
            std::find(tick.gradients.begin(), tick.gradients.end(), bucket.parameters[s]) !=
                tick.gradients.end())
          buffer.changed = true;
        for (std::size_t i = 0; i < step.parameter_sizes[p]; ++i) {
          const std::size_t e = bucket.offsets[s] + i;
          if (divided) {
            // DDP divided the bucket in place and copied it into .grad.
            const float value = record.averaged_gradients[p][i];
            buffer.cells.push_back({number(value), region >= 0
                                                       ? final_state.provenance_at(region, e)
                                                       : sim::RankSet{}});
            flat.push_back(value);
          } else if (region >= 0 && (started || produced)) {
            const Tensor values = replay.tensor(region);
            buffer.cells.push_back(
                {number(values.item_as_double(e)), replay.provenance_at(region, e)});
            flat.push_back(static_cast<float>(values.item_as_double(e)));
          } else if (produced) {
            const float value = record.local_gradients[p][i];
            buffer.cells.push_back({number(value), sim::RankSet::single(rank)});
            flat.push_back(value);
          } else {
            buffer.cells.push_back({"", {}});  // backward has not produced it yet
          }
        }
      }
      buffer.changed =
          buffer.changed || written.count(region) > 0 || (ddp && t == walk.divide_tick);
      buffer.sent = read.count(region) > 0;
      buffer.printed = flat.size() == bucket.numel ? printed(flat) : "";
      buffer.block = buffer.cells.size();
      panel.buffers.push_back(std::move(buffer));
    }

    // Horovod keeps the sums in its fusion buffers and writes the averages
    // straight into .grad.
    if (!ddp && t >= walk.divide_tick) {
      BufferView buffer;
      buffer.name = buffer.label = ".grad (averaged)";
      buffer.changed = t == walk.divide_tick;
      std::vector<float> flat;
      for (std::size_t p = 0; p < record.averaged_gradients.size(); ++p)
        for (std::size_t i = 0; i < record.averaged_gradients[p].size(); ++i) {
          const Slot& slot = slots[p];
          const int region =
              slot.bucket >= 0 ? record.bucket_regions[static_cast<std::size_t>(slot.bucket)] : -1;
          buffer.cells.push_back(
              {number(record.averaged_gradients[p][i]),
               region >= 0 ? final_state.provenance_at(region, slot.offset + i) : sim::RankSet{}});
          flat.push_back(record.averaged_gradients[p][i]);
        }
      buffer.printed = printed(flat);
      buffer.block = buffer.cells.size();
      panel.buffers.push_back(std::move(buffer));
    }

    // The all_reduce's scratch, while this tick's step uses it.
    if (tick.step_runs) {
      for (int id : run.regions_of(rank)) {
        const sim::Region& region = run.regions[static_cast<std::size_t>(id)];
        if (region.kind != sim::RegionKind::Scratch) continue;
        const bool alive =
            region.created <= k && (region.freed == sim::kNoStep || region.freed >= k);
        if (!alive && written.count(id) == 0 && read.count(id) == 0) continue;
        BufferView buffer;
        buffer.name = buffer.label = region.name;
        buffer.scratch = true;
        buffer.changed = written.count(id) > 0;
        buffer.sent = read.count(id) > 0;
        const Tensor values = replay.tensor(id);
        for (std::size_t i = 0; i < values.numel(); ++i)
          buffer.cells.push_back({number(values.item_as_double(i)), replay.provenance_at(id, i)});
        buffer.printed = values.to_string();
        buffer.block = buffer.cells.size();
        panel.buffers.push_back(std::move(buffer));
      }
    }
    view.ranks.push_back(std::move(panel));
  }

  if (tick.step_runs) {
    for (const sim::Message& message : run.messages_in(k)) {
      // The arrow's label names the chunk; the buffer it comes from is the
      // one marked as read, and the sentence names it too.
      std::string chunk = where(run, message.from);
      chunk = chunk.substr(0, chunk.find(" of "));
      view.arrows.push_back(
          {message.src, message.dst,
           message.bytes == 0 ? "empty chunk" : chunk + " (" + carried(run, message) + ")",
           message.reduced});
      view.message_lines.push_back(message_clause(run, message) + " [" +
                                   std::to_string(message.bytes) + " B]");
      view.ranks[static_cast<std::size_t>(message.src)].sends = true;
      view.ranks[static_cast<std::size_t>(message.dst)].receives = true;
    }
  }

  CostView& cost = view.cost;
  const sim::Prediction& prediction = act.prediction;
  cost.total_seconds = prediction.total_s;
  cost.size_bytes = prediction.size_bytes;
  cost.total_bytes_sent = run.bytes_sent;
  cost.step_bytes_sent.assign(static_cast<std::size_t>(run.ranks), 0);
  if (tick.shown_step >= 1 && k < prediction.steps.size())
    cost.elapsed_seconds = prediction.steps[k].start_s + prediction.steps[k].seconds;
  if (tick.step_runs && k < prediction.steps.size()) {
    const sim::StepCost& cost_of_step = prediction.steps[k];
    cost.has_step = true;
    cost.step_seconds = cost_of_step.seconds;
    cost.elapsed_seconds = cost_of_step.start_s + cost_of_step.seconds;
    cost.bottleneck = cost_of_step.bottleneck;
    cost.step_bytes = cost_of_step.bytes;
    for (const sim::Message& message : run.messages_in(k))
      cost.step_bytes_sent[static_cast<std::size_t>(message.src)] += message.bytes;
  }
  return view;
}

}  // namespace ringlab::gui
