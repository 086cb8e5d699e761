#include "gui/frame_parts.hpp"

#include "gui/frame_words.hpp"
#include "primitives/collectives.hpp"

namespace ringlab::gui {

CellView make_cell(const sim::Run& run, std::string text, const sim::RankSet& provenance) {
  return {std::move(text), provenance, cell_ranks_text(run, provenance)};
}

std::vector<std::string> legend_of(const sim::Run& run) {
  std::vector<std::string> legend;
  for (int rank = 0; rank < run.ranks; ++rank)
    legend.push_back(has_roles(run) ? role_of(run, rank) + " (rank " + std::to_string(rank) + ")"
                                    : "r" + std::to_string(rank));
  return legend;
}

void add_messages(FrameView& view, const sim::Run& run, sim::Step step, bool name_buffers) {
  for (const sim::Message& message : run.messages_in(step)) {
    std::string label = empty_message_name(run);
    std::string range = label;
    if (message.bytes > 0) {
      // "block 2 of its scatter_list": the box marks the list as read.
      range = location_label(run, message.from);
      range = range.substr(0, range.find(name_buffers ? " of its " : " of "));
      label = range + " (" + payload_text(run, message) + ")";
    }
    if (!message.delivered) {  // a real run that failed: its receive never completed
      label += ", never arrived";
      range += ", never arrived";
    }
    view.arrows.push_back({message.src, message.dst, std::move(label), std::move(range),
                           message.reduced, message.bytes == 0, !message.delivered});
    view.message_lines.push_back(message_clause(run, message) + " [" +
                                 std::to_string(message.bytes) + " B]");
    view.ranks.at(static_cast<std::size_t>(message.src)).sends = true;
    view.ranks.at(static_cast<std::size_t>(message.dst)).receives = true;
  }
  // Receives no message matched (a real run that failed), from the step
  // their rank began to wait.
  for (const sim::Awaited& awaited : run.awaited)
    if (awaited.step == step)
      view.message_lines.push_back(role_of(run, awaited.dst) + " waits for " +
                                   std::to_string(awaited.bytes) + " B from " +
                                   role_of(run, awaited.src) +
                                   ": they never come (the run failed)");
}

int subject_of(const sim::Run& run, sim::Step step) {
  if (step == 0) return -1;
  const std::vector<sim::Message> messages = messages_as_told(run, step);
  return messages.empty() ? -1 : messages.front().dst;
}

bool neighbours_only(const sim::Run& run) {
  for (const sim::Message& message : run.messages) {
    const int apart = (message.dst - message.src + run.ranks) % run.ranks;
    if (apart != 1 && apart != run.ranks - 1) return false;
  }
  return true;
}

void fill_cost(CostView& cost, const Act& act, sim::Step shown, bool runs) {
  const sim::Run& run = act.run;
  const sim::Prediction& prediction = act.prediction;
  cost.total_seconds = prediction.total_s;
  const CollectiveInfo* collective = find_collective(run.operation);
  cost.carries_data =
      !(collective && collective->input == Shape::None && collective->output == Shape::None);
  if (cost.carries_data) {
    cost.size_bytes = prediction.size_bytes;
    cost.algbw_GBps = prediction.algbw_GBps;
    cost.busbw_GBps = prediction.busbw_GBps;
  }
  cost.total_bytes_sent = run.bytes_sent;
  const auto ranks = static_cast<std::size_t>(run.ranks);
  cost.total_bytes_sent.resize(ranks, 0);
  cost.step_bytes_sent.assign(ranks, 0);
  cost.bytes_sent_so_far.assign(ranks, 0);
  for (const sim::Message& message : run.messages)
    if (shown >= 1 && message.step <= shown)
      cost.bytes_sent_so_far[static_cast<std::size_t>(message.src)] += message.bytes;
  if (shown < 1 || shown >= prediction.steps.size()) return;
  const sim::StepCost& step = prediction.steps[shown];
  cost.elapsed_seconds = step.start_s + step.seconds;
  if (!runs) return;
  cost.has_step = true;
  cost.step_seconds = step.seconds;
  cost.bottleneck = with_role_names(run, step.bottleneck);
  cost.step_bytes = step.bytes;
  for (const sim::Message& message : run.messages_in(shown))
    cost.step_bytes_sent[static_cast<std::size_t>(message.src)] += message.bytes;
}

}  // namespace ringlab::gui
