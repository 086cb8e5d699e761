// The sentences and frames of a training step (training_walk.hpp): each
// rank's parameters, buckets (or fusion buffers), averaged gradients and
// scratch at one tick, with the frame parts every walkthrough shares
// (frame_parts.hpp) for its messages and cost.
#include <algorithm>
#include <set>

#include "gui/frame_parts.hpp"
#include "gui/training_slots.hpp"
#include "gui/training_walk.hpp"

namespace ringlab::gui {

namespace {

using training::RecordedStep;
using Compute = TrainingTick::Compute;

// float32 values as the articles print a tensor: tensor([1., 2.]).
std::string printed(const std::vector<float>& values) {
  Tensor tensor(DType::Float32, {static_cast<std::int64_t>(values.size())});
  std::copy(values.begin(), values.end(), tensor.data<float>().begin());
  return tensor.to_string();
}

// ---- words ---------------------------------------------------------------------

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
  const std::vector<sim::Message> messages = messages_as_told(run, k);
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
    losses.push_back(number_text(step.ranks[r].loss) + " on rank " + std::to_string(r));
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
      for (float x : v) text += (text.empty() ? "" : ", ") + number_text(x);
      return "[" + text + "]";
    };
    return "batch x = " + values(record.inputs) + ", targets y = " + values(record.targets);
  }
  std::string line = "loss " + number_text(record.loss);
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
      line += ", parameters -= " + number_text(step.lr) + " .grad";
      break;
  }
  return line;
}

// A backward tick: the layer, where its gradients go, the buckets it issues,
// and the communication it hides.
std::string backward_clause(const TrainingWalk& walk, int t) {
  const RecordedStep& step = walk.step;
  const TrainingTick& tick = walk.ticks.at(static_cast<std::size_t>(t));
  const bool ddp = is_ddp(step);
  std::string clause = "backward of " + tick.layer;
  if (t == 2) clause += " (the last layer first)";
  std::vector<std::string> names;
  for (int p : tick.gradients) names.push_back(step.parameter_names[static_cast<std::size_t>(p)]);
  const int bucket = slots_of(step)[static_cast<std::size_t>(tick.gradients.front())].bucket;
  clause += ": the gradient of " + list_text(names) + (ddp ? " is copied into " : " joins ") +
            bucket_name(step, bucket);
  for (int b : tick.issued)
    clause += "; " + bucket_name(step, b) +
              (ddp ? " is full: its all_reduce is issued and runs while backward goes on"
                   : " reached the fusion threshold: its all_reduce is issued");
  if (tick.step_runs)
    clause += "; meanwhile " + comm_clause(walk, static_cast<sim::Step>(tick.shown_step)) +
              ", hidden behind backward";
  return clause;
}

// The compute lane's words for tick t (after "step t of N, ").
std::string compute_clause(const TrainingWalk& walk, int t) {
  const RecordedStep& step = walk.step;
  const TrainingTick& tick = walk.ticks.at(static_cast<std::size_t>(t));
  const bool ddp = is_ddp(step);
  const std::string world = std::to_string(step.ranks.size());
  switch (tick.compute) {
    case Compute::Before:
      break;
    case Compute::Forward:
      return "forward: every rank runs the model on its own batch and computes its loss" +
             (step.ranks.size() <= 4 ? " (" + losses_text(step) + ")" : std::string());
    case Compute::Backward:
      return backward_clause(walk, t);
    case Compute::FinalWait: {
      std::string clause =
          ddp ? "the final wait: backward is done, and DDP waits for the all_reduces"
              : "optimizer.step() calls synchronize(), which waits for the all_reduces";
      for (int b : tick.issued)
        clause += "; it issues " + bucket_name(step, b) + ", still under the threshold";
      if (tick.step_runs)
        clause += "; " + comm_clause(walk, static_cast<sim::Step>(tick.shown_step)) +
                  ", exposed: no backward left to hide it";
      return clause;
    }
    case Compute::Divide:
      return ddp ? "DDP divides each bucket by the world size (" + world +
                       ") and copies the averages into .grad: every rank holds the gradient "
                       "averaged over all ranks' samples"
                 : "synchronize() writes each fusion buffer divided by size() (" + world +
                       ") into .grad, Horovod's Average: every rank holds the gradient averaged "
                       "over all ranks' samples";
    case Compute::Update:
      return "optimizer.step(): SGD subtracts " + number_text(step.lr) +
             (ddp ? std::string()
                  : " (the learning rate " + number_text(step.scenario.lr) +
                        " times size(), as seed 003 scales it)") +
             " x .grad; the same averaged gradient gives the same update on every rank, so "
             "the parameters stay identical everywhere";
  }
  return {};
}

// ---- the frame -----------------------------------------------------------------

// What one tick shows of the record: the replay as of its step, the final
// state (whose provenance the averages and updated parameters carry), and
// what the tick's step writes and reads (step 1 also shows step 0).
struct TickState {
  const TrainingWalk& walk;
  const TrainingTick& tick;
  int t;
  sim::Step k;  // the record step shown (0: none yet)
  sim::Replay replay;
  sim::Replay final_state;
  std::set<int> written, read;
  std::vector<Slot> slots;

  TickState(const TrainingWalk& w, int at)
      : walk(w),
        tick(w.ticks.at(static_cast<std::size_t>(at))),
        t(at),
        k(static_cast<sim::Step>(std::max<long long>(tick.shown_step, 0))),
        replay(w.step.run),
        final_state(w.step.run),
        slots(slots_of(w.step)) {
    const sim::Run& run = w.step.run;
    if (tick.shown_step >= 0) replay.seek(k);
    final_state.seek(run.steps);
    if (!tick.step_runs) return;
    for (sim::Step s = k == 1 ? 0 : k; s <= k; ++s)
      for (const sim::Write& write : run.writes_in(s)) written.insert(write.dst.region);
    for (const sim::Message& m : run.messages_in(k)) read.insert(m.from.region);
  }
  const sim::Run& run() const { return walk.step.run; }
  // Where parameter p's element i ends up in the rank's bucket, per the
  // final state (empty when the parameter is in no bucket).
  sim::RankSet final_provenance(const training::RankRecord& record, std::size_t p,
                                std::size_t i) const {
    const Slot& slot = slots[p];
    if (slot.bucket < 0) return {};
    const int region = record.bucket_regions[static_cast<std::size_t>(slot.bucket)];
    return region >= 0 ? final_state.provenance_at(region, slot.offset + i) : sim::RankSet{};
  }
};

// The parameters, in the model's order; after the update they hold every
// rank's data, through the averaged gradient.
BufferView parameters_buffer(const TickState& at, const training::RankRecord& record) {
  BufferView buffer;
  buffer.name = buffer.label = "parameters";
  buffer.changed = at.tick.compute == Compute::Update;
  const training::Values& values = buffer.changed ? record.after : record.before;
  std::vector<float> flat;
  for (std::size_t p = 0; p < values.size(); ++p)
    for (std::size_t i = 0; i < values[p].size(); ++i) {
      const sim::RankSet provenance =
          buffer.changed ? at.final_provenance(record, p, i) : sim::RankSet{};
      buffer.cells.push_back(make_cell(at.run(), number_text(values[p][i]), provenance));
      flat.push_back(values[p][i]);
    }
  buffer.printed = printed(flat);
  buffer.block = buffer.cells.size();
  return buffer;
}

// Bucket b as the tick sees it: averaged once DDP divided it, the record's
// values once its all_reduce started or its gradient was produced, else an
// empty slot.
BufferView bucket_buffer(const TickState& at, const training::RankRecord& record, int rank,
                         std::size_t b) {
  const RecordedStep& step = at.walk.step;
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
  const bool started = at.tick.shown_step >= 0 && at.walk.first_step[b] <= at.k;
  const bool divided = is_ddp(step) && at.t >= at.walk.divide_tick;
  const Tensor values = region >= 0 ? at.replay.tensor(region) : Tensor{};
  std::vector<float> flat;
  for (std::size_t s = 0; s < bucket.parameters.size(); ++s) {
    const auto p = static_cast<std::size_t>(bucket.parameters[s]);
    const bool produced = at.walk.gradient_tick[p] <= at.t;
    const std::vector<int>& now = at.tick.gradients;
    if (at.tick.compute == Compute::Backward &&
        std::find(now.begin(), now.end(), bucket.parameters[s]) != now.end())
      buffer.changed = true;
    for (std::size_t i = 0; i < step.parameter_sizes[p]; ++i) {
      const std::size_t e = bucket.offsets[s] + i;
      if (divided) {
        // DDP divided the bucket in place and copied it into .grad.
        const float value = record.averaged_gradients[p][i];
        buffer.cells.push_back(
            make_cell(at.run(), number_text(value),
                      region >= 0 ? at.final_state.provenance_at(region, e) : sim::RankSet{}));
        flat.push_back(value);
      } else if (region >= 0 && (started || produced)) {
        const double value = values.item_as_double(e);
        buffer.cells.push_back(
            make_cell(at.run(), number_text(value), at.replay.provenance_at(region, e)));
        flat.push_back(static_cast<float>(value));
      } else if (produced) {
        const float value = record.local_gradients[p][i];
        buffer.cells.push_back(make_cell(at.run(), number_text(value), sim::RankSet::single(rank)));
        flat.push_back(value);
      } else {
        buffer.cells.push_back({});  // backward has not produced it yet
      }
    }
  }
  buffer.changed = buffer.changed || at.written.count(region) > 0 ||
                   (is_ddp(step) && at.t == at.walk.divide_tick);
  buffer.sent = at.read.count(region) > 0;
  buffer.printed = flat.size() == bucket.numel ? printed(flat) : "";
  buffer.block = buffer.cells.size();
  return buffer;
}

// Horovod keeps the sums in its fusion buffers and writes the averages
// straight into .grad.
BufferView averaged_buffer(const TickState& at, const training::RankRecord& record) {
  BufferView buffer;
  buffer.name = buffer.label = ".grad (averaged)";
  buffer.changed = at.t == at.walk.divide_tick;
  std::vector<float> flat;
  for (std::size_t p = 0; p < record.averaged_gradients.size(); ++p)
    for (std::size_t i = 0; i < record.averaged_gradients[p].size(); ++i) {
      const float value = record.averaged_gradients[p][i];
      buffer.cells.push_back(
          make_cell(at.run(), number_text(value), at.final_provenance(record, p, i)));
      flat.push_back(value);
    }
  buffer.printed = printed(flat);
  buffer.block = buffer.cells.size();
  return buffer;
}

// The all_reduce's scratch of `rank`, while the tick's step uses it.
void add_scratch(const TickState& at, int rank, RankPanel& panel) {
  const sim::Run& run = at.run();
  for (int id : run.regions_of(rank)) {
    const sim::Region& region = run.regions[static_cast<std::size_t>(id)];
    if (region.kind != sim::RegionKind::Scratch) continue;
    const bool alive =
        region.created <= at.k && (region.freed == sim::kNoStep || region.freed >= at.k);
    if (!alive && at.written.count(id) == 0 && at.read.count(id) == 0) continue;
    BufferView buffer;
    buffer.name = buffer.label = region.name;
    buffer.scratch = true;
    buffer.changed = at.written.count(id) > 0;
    buffer.sent = at.read.count(id) > 0;
    const Tensor values = at.replay.tensor(id);
    for (std::size_t i = 0; i < values.numel(); ++i)
      buffer.cells.push_back(
          make_cell(run, element_text(values, i), at.replay.provenance_at(id, i)));
    buffer.printed = values.to_string();
    buffer.block = buffer.cells.size();
    panel.buffers.push_back(std::move(buffer));
  }
}

}  // namespace

std::string training_sentence(const Act& act, int t) {
  const TrainingWalk& walk = *act.training;
  const RecordedStep& step = walk.step;
  if (walk.ticks.at(static_cast<std::size_t>(t)).compute == Compute::Before)
    return act.title + ", before step 1: " +
           (is_ddp(step) ? "DistributedDataParallel's constructor broadcast rank 0's parameters"
                         : "hvd.broadcast_parameters sent rank 0's parameters") +
           ", so every rank starts from the same ones; each rank holds its own batch of " +
           std::to_string(step.ranks.front().inputs.size()) + " samples";
  return "step " + std::to_string(t) + " of " + std::to_string(walk.ticks.size() - 1) + ", " +
         compute_clause(walk, t);
}

FrameView build_training_frame(const Act& act, int t, const std::string& sentence) {
  const TrainingWalk& walk = *act.training;
  const RecordedStep& step = walk.step;
  const sim::Run& run = step.run;
  const TickState at(walk, t);
  FrameView view;
  view.training = true;
  view.act_title = act.title;
  view.position =
      t == 0 ? "before step 1"
             : "step " + std::to_string(t) + " of " + std::to_string(walk.ticks.size() - 1);
  view.sentence = sentence;
  view.overlap_lines = walk.overlap_lines;
  view.legend = legend_of(run);
  for (int rank = 0; rank < run.ranks; ++rank) {
    const training::RankRecord& record = step.ranks[static_cast<std::size_t>(rank)];
    RankPanel panel;
    panel.rank = rank;
    panel.role = role_of(run, rank);
    panel.line = rank_line(walk, at.tick, rank);
    panel.buffers.push_back(parameters_buffer(at, record));
    for (std::size_t b = 0; b < step.buckets.size(); ++b)
      panel.buffers.push_back(bucket_buffer(at, record, rank, b));
    if (!is_ddp(step) && t >= walk.divide_tick)
      panel.buffers.push_back(averaged_buffer(at, record));
    if (at.tick.step_runs) add_scratch(at, rank, panel);
    view.ranks.push_back(std::move(panel));
  }
  if (at.tick.step_runs) add_messages(view, run, at.k, /*name_buffers=*/false);
  // Between its message steps, a tick follows the rank the last one did.
  view.subject = subject_of(run, at.k);
  view.neighbours_only = neighbours_only(run);
  fill_cost(view.cost, act, at.tick.shown_step >= 1 ? at.k : 0, at.tick.step_runs);
  return view;
}

}  // namespace ringlab::gui
