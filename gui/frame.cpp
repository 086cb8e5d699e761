// The frames of a collective and of the parameter server: every rank's
// buffers from a replay of the record, the step's messages and the cost.
// A training step's frames are training_frame.cpp's.
#include "gui/frame.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "gui/frame_parts.hpp"
#include "gui/training_walk.hpp"

namespace ringlab::gui {

namespace {

// Elements [first, first + n) of a 1-D tensor as a tensor of its own.
Tensor slice(const Tensor& tensor, std::size_t first, std::size_t n) {
  Tensor part(tensor.dtype(), {static_cast<std::int64_t>(n)});
  const std::size_t size = element_size(tensor.dtype());
  std::memcpy(part.bytes().data(), tensor.bytes().data() + first * size, n * size);
  return part;
}

// User buffers stay on screen to the end (they are what the program prints
// afterwards); scratch shows while allocated, through the step that frees it
// (a message may land in it in that very step).
bool shown_at(const sim::Run& run, const sim::Region& region, sim::Step step) {
  if (region.created > step) return false;
  return is_user_region(run, region) || region.freed == sim::kNoStep || region.freed >= step;
}

// The rank's tensor in the article's program: "buf" when there is one, else
// the user buffer of exactly the tensor's size (scatter's out, gather's in),
// else the first user buffer.
int primary_region(const sim::Run& run, int rank) {
  int fallback = -1;
  int sized = -1;
  for (int id : run.regions_of(rank)) {
    const sim::Region& region = run.regions[id];
    if (!is_user_region(run, region)) continue;
    if (region.name == "buf") return id;
    if (sized < 0 && region.count == run.count) sized = id;
    if (fallback < 0) fallback = id;
  }
  return sized >= 0 ? sized : fallback;
}

// What the frame's step touches: the regions it writes (step 1's frame also
// shows step 0's set-up) and those its messages are read from.
struct Touched {
  std::set<int> written;
  std::set<int> read;
};
Touched touched_in(const sim::Run& run, sim::Step step) {
  Touched touched;
  if (step == 0) return touched;
  for (sim::Step k = step == 1 ? 0 : step; k <= step; ++k)
    for (const sim::Write& w : run.writes_in(k)) touched.written.insert(w.dst.region);
  for (const sim::Message& message : run.messages_in(step))
    touched.read.insert(message.from.region);
  return touched;
}

BufferView buffer_view(const sim::Run& run, const sim::Replay& replay, int id, bool primary,
                       const Touched& touched) {
  const sim::Region& region = run.regions[id];
  BufferView buffer;
  buffer.name = region.name;
  buffer.label = display_name(run, region);
  buffer.primary = primary;
  buffer.scratch = !is_user_region(run, region);
  buffer.changed = touched.written.count(id) > 0;
  buffer.sent = touched.read.count(id) > 0;
  const Tensor tensor = replay.tensor(id);
  buffer.block = tensor.numel();
  if (!run.values_recorded) {
    // A record of provenance only (a large run, a real run's trace): the
    // cells show whose inputs they hold, and nothing pretends to be a value.
    buffer.printed = "(" + std::to_string(tensor.numel()) + " elements, values not recorded)";
    if (holds_blocks(run, region)) buffer.block = run.count;
    for (std::size_t i = 0; i < tensor.numel(); ++i)
      buffer.cells.push_back(make_cell(run, "", replay.provenance_at(id, i)));
    return buffer;
  }
  if (holds_blocks(run, region)) {
    std::vector<Tensor> blocks;
    for (int b = 0; b < run.ranks; ++b)
      blocks.push_back(slice(tensor, static_cast<std::size_t>(b) * run.count, run.count));
    buffer.printed = to_string(blocks);
    buffer.block = run.count;
  } else {
    buffer.printed = tensor.to_string();
  }
  for (std::size_t i = 0; i < tensor.numel(); ++i)
    buffer.cells.push_back(make_cell(run, element_text(tensor, i), replay.provenance_at(id, i)));
  return buffer;
}

RankPanel rank_panel(const sim::Run& run, const sim::Replay& replay, int rank, sim::Step step,
                     const Touched& touched) {
  RankPanel panel;
  panel.rank = rank;
  panel.role = role_of(run, rank);
  const int primary = primary_region(run, rank);
  std::vector<int> regions = run.regions_of(rank);
  std::stable_partition(regions.begin(), regions.end(), [&](int id) { return id == primary; });
  for (int id : regions) {
    const sim::Region& region = run.regions[id];
    // A buffer the step reads or writes shows in any case: a rank's own
    // timeline runs ahead of message delivery (its sends are buffered), so
    // it may already have freed a buffer whose message lands now.
    if (!shown_at(run, region, step) && touched.written.count(id) == 0 &&
        touched.read.count(id) == 0)
      continue;
    BufferView buffer = buffer_view(run, replay, id, id == primary, touched);
    if (buffer.primary) {
      const bool collective = run.operation != "parameter_server";
      panel.line = capitalized(panel.role) + " has " +
                   (collective ? std::string("data") : region.name) + " " + buffer.printed;
    }
    panel.buffers.push_back(std::move(buffer));
  }
  if (panel.line.empty()) panel.line = capitalized(panel.role) + " has no data";  // barrier
  return panel;
}

}  // namespace

std::string frame_sentence(const Recording& recording, const FrameRef& frame) {
  const Act& act = recording.acts.at(static_cast<std::size_t>(frame.act));
  if (act.training) return training_sentence(act, static_cast<int>(frame.step));
  const sim::Run& run = act.run;
  const std::string part = recording.acts.size() > 1
                               ? " (part " + std::to_string(frame.act + 1) + " of " +
                                     std::to_string(recording.acts.size()) + ")"
                               : "";
  if (frame.step == 0)
    return recording.acts[frame.act].title + part + ", before step 1: every " +
           (run.operation == "parameter_server" ? "server and worker" : "rank") +
           " holds its input";
  std::string sentence = "step " + std::to_string(frame.step) + " of " + std::to_string(run.steps) +
                         part + ", " + phase_name(run, frame.step) + ": ";
  const std::vector<sim::Message> messages = messages_as_told(run, frame.step);
  if (messages.empty()) {
    sentence += "no messages; ranks work on their own buffers";
    return sentence;
  }
  sentence += message_clause(run, messages.front());
  if (messages.size() == 2) sentence += "; " + message_clause(run, messages[1]);
  if (messages.size() > 2)
    sentence += "; " + std::to_string(messages.size() - 1) + " more messages at the same time";
  return sentence;
}

FrameView build_frame(const GuiState& state) { return build_frame(state.recording, state.cursor); }

FrameView build_frame(const Recording& recording, int frame_index) {
  const FrameRef& frame = recording.frames.at(static_cast<std::size_t>(frame_index));
  const Act& act = recording.acts.at(static_cast<std::size_t>(frame.act));
  const std::string& sentence = recording.sentences.at(static_cast<std::size_t>(frame_index));
  if (act.training) return build_training_frame(act, static_cast<int>(frame.step), sentence);
  const sim::Run& run = act.run;
  FrameView view;
  view.act_title = act.title;
  view.position = frame.step == 0
                      ? "before step 1"
                      : "step " + std::to_string(frame.step) + " of " + std::to_string(run.steps);
  view.sentence = sentence;
  if (!run.values_recorded) view.values_note = run.values_note;
  view.legend = legend_of(run);

  sim::Replay replay(run);
  if (frame.step > 0) replay.seek(frame.step);
  const Touched touched = touched_in(run, frame.step);
  for (int rank = 0; rank < run.ranks; ++rank)
    view.ranks.push_back(rank_panel(run, replay, rank, frame.step, touched));
  if (frame.step > 0) add_messages(view, run, frame.step, /*name_buffers=*/true);
  view.subject = subject_of(run, frame.step);
  view.neighbours_only = neighbours_only(run);
  fill_cost(view.cost, act, frame.step, /*runs=*/frame.step > 0);
  return view;
}

}  // namespace ringlab::gui
