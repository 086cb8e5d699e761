#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <set>

#include "gui/frame.hpp"
#include "gui/training_walk.hpp"
#include "primitives/comm.hpp"

namespace ringlab::gui {

namespace {

std::string capitalized(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

std::string role_of(const sim::Run& run, int rank) {
  if (rank >= 0 && static_cast<std::size_t>(rank) < run.roles.size()) return run.roles[rank];
  return "rank " + std::to_string(rank);
}

// Whether ranks have roles of their own ("server 0", "worker 1"): then the
// frame names them by role, and rank numbers appear only in the legend.
bool has_roles(const sim::Run& run) {
  for (const std::string& role : run.roles)
    if (role.rfind("rank ", 0) != 0) return true;
  return false;
}

// The cost model speaks of ranks ("send port of rank 2", "ring link 2->3"):
// where ranks have roles, name them by role instead.
std::string with_role_names(const sim::Run& run, const std::string& text) {
  if (!has_roles(run)) return text;
  const std::regex rank_names(R"(rank (\d+)|(\d+)->(\d+))");
  std::string out;
  auto done = text.cbegin();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), rank_names);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& match = *it;
    out.append(done, match[0].first);
    if (match[1].matched)
      out += role_of(run, std::stoi(match[1].str()));
    else
      out += role_of(run, std::stoi(match[2].str())) + " -> " +
             role_of(run, std::stoi(match[3].str()));
    done = match[0].second;
  }
  out.append(done, text.cend());
  return out;
}

std::string element_text(const Tensor& tensor, std::size_t i) {
  const double value = tensor.item_as_double(i);
  char text[32];
  if (!is_floating(tensor.dtype()))
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  else
    std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

// Elements [first, first + n) of a 1-D tensor as a tensor of its own.
Tensor slice(const Tensor& tensor, std::size_t first, std::size_t n) {
  Tensor part(tensor.dtype(), {static_cast<std::int64_t>(n)});
  const std::size_t size = element_size(tensor.dtype());
  std::memcpy(part.bytes().data(), tensor.bytes().data() + first * size, n * size);
  return part;
}

// The buffers a program hands over and reads afterwards. The parameter
// server's are params, update and pulled; the headers, keys and replies it
// names are staging for one message each, scratch as far as the learner is
// concerned (the recorder counts every named buffer as the program's).
bool is_user_region(const sim::Run& run, const sim::Region& region) {
  if (run.operation == "parameter_server")
    return region.name == "params" || region.name == "update" || region.name == "pulled";
  return region.kind == sim::RegionKind::User;
}

// User buffers stay on screen to the end (they are what the program prints
// afterwards); scratch shows while allocated, through the step that frees it
// (a message may land in it in that very step).
bool shown_at(const sim::Run& run, const sim::Region& region, sim::Step step) {
  if (region.created > step) return false;
  return is_user_region(run, region) || region.freed == sim::kNoStep || region.freed >= step;
}

// Whether a region holds one block per rank (scatter's send, gather's recv,
// all_gather's buf): then it prints as a list, as the articles print
// scatter_list and gather_list.
bool holds_blocks(const sim::Run& run, const sim::Region& region) {
  return run.count > 0 && run.ranks > 1 &&
         region.count == run.count * static_cast<std::size_t>(run.ranks);
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

// The articles' names for the list arguments; other regions keep theirs.
std::string display_name(const sim::Run& run, const sim::Region& region) {
  if (run.operation == "scatter" && region.name == "send") return "scatter_list";
  if (run.operation == "gather" && region.name == "recv") return "gather_list";
  if (run.operation == "all_gather" && region.name == "buf") return "tensor_list";
  return region.name;
}

// "push header to 0" -> "push header": the arrow already says where.
std::string short_name(const std::string& name) {
  for (const char* direction : {" to ", " from "}) {
    const std::size_t at = name.rfind(direction);
    if (at != std::string::npos && at > 0) return name.substr(0, at);
  }
  return name;
}

std::string range_text(std::size_t first, std::size_t last) {
  return "[" + std::to_string(first) + ", " + std::to_string(last) + ")";
}

// "chunk 1" or "chunks 1-2" when [offset, end) is exactly chunks [i, j).
std::string chunk_words(std::span<const Chunk> chunks, std::size_t offset, std::size_t end,
                        const char* word) {
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].offset != offset || chunks[i].count == 0) continue;
    for (std::size_t j = i; j < chunks.size(); ++j) {
      if (chunks[j].end() != end) continue;
      if (i == j) return std::string(word) + " " + std::to_string(i);
      return std::string(word) + "s " + std::to_string(i) + "-" + std::to_string(j);
    }
  }
  return {};
}

// Provenance of what a message carried ("r0+r3").
std::string payload_text(const sim::Run& run, const sim::Message& message) {
  sim::RankSet all;
  for (const sim::ProvRun& part : run.runs(message.payload)) all = all.unite(run.set(part.set));
  return provenance_text(run, all);
}

// A message without bytes: a barrier's signal, or a chunk left empty
// because there are more ranks than elements.
std::string empty_message_name(const sim::Run& run) {
  return run.operation == "barrier" ? "empty message" : "empty chunk";
}

std::string message_clause(const sim::Run& run, const sim::Message& message) {
  if (message.bytes == 0)
    return role_of(run, message.src) + " sends " + role_of(run, message.dst) + " an " +
           empty_message_name(run);
  std::string clause = role_of(run, message.src) + " sends " + location_label(run, message.from) +
                       " to " + role_of(run, message.dst);
  if (message.reduced)
    clause += ", which " + op_verb(message.reduce_op);
  else if (message.to.region >= 0 && !is_user_region(run, run.regions[message.to.region]))
    clause += ", which receives it into its " + short_name(run.regions[message.to.region].name);
  else if (message.to.region >= 0 && message.to.offset == 0 &&
           message.to.count == run.regions[message.to.region].count)
    clause += ", which stores it in its " +
              (run.regions[message.to.region].count == run.count
                   ? std::string("tensor")
                   : display_name(run, run.regions[message.to.region]));
  else
    clause += ", which stores it as its " + location_label(run, message.to);
  return clause;
}

}  // namespace

std::string op_verb(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return "adds it to its own";
    case ReduceOp::PRODUCT:
      return "multiplies its own by it";
    case ReduceOp::MIN:
      return "keeps the smaller of it and its own";
    case ReduceOp::MAX:
      return "keeps the larger of it and its own";
    case ReduceOp::BAND:
      return "ANDs it into its own";
    case ReduceOp::BOR:
      return "ORs it into its own";
    case ReduceOp::BXOR:
      return "XORs it into its own";
  }
  return "reduces it into its own";
}

// The phase a step belongs to, named after what its messages do.
std::string phase_name(const sim::Run& run, sim::Step step) {
  bool reduces = false;
  for (const sim::Message& m : run.messages_in(step)) reduces = reduces || m.reduced;
  for (const sim::Write& w : run.writes_in(step))
    reduces = reduces || w.kind == sim::WriteKind::Reduce;
  const std::string& op = run.operation;
  const std::string& algorithm = run.algorithm;
  // A training step's record is a sequence of all_reduces.
  if (op == "all_reduce" || op == "ddp_step" || op == "horovod_step") {
    if (algorithm == "ring" || algorithm == "rabenseifner")
      return reduces ? "reduce-scatter" : "all-gather";
    if (algorithm == "reduce_broadcast") return reduces ? "reduce" : "broadcast";
    if (algorithm == "binary_tree") return reduces ? "reduce up the tree" : "broadcast down the tree";
    return reduces ? "exchange and reduce" : "exchange";
  }
  if (op == "parameter_server") {
    const auto messages = run.messages_in(step);
    if (messages.empty()) return reduces ? "servers apply the updates" : "local work";
    const sim::Message& first = messages.front();
    const bool to_server = role_of(run, first.dst).rfind("server", 0) == 0;
    if (!to_server) return "pull: servers answer";
    return reduces ? "push: servers apply the updates" : "push and pull requests";
  }
  std::string name = op;
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

std::string provenance_text(const sim::Run& run, const sim::RankSet& set) {
  if (!has_roles(run) || set.empty()) return set.to_string();
  // "server 1", "worker 0", "worker 2" -> "server 1 + workers 0, 2"
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (int rank : set.ranks()) {
    const std::string role = role_of(run, rank);
    const std::size_t space = role.rfind(' ');
    const std::string word = space == std::string::npos ? role : role.substr(0, space);
    const std::string number = space == std::string::npos ? "" : role.substr(space + 1);
    auto at = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& group) { return group.first == word; });
    if (at == groups.end()) at = groups.insert(groups.end(), {word, {}});
    at->second.push_back(number);
  }
  std::string text;
  for (const auto& [word, numbers] : groups) {
    text += text.empty() ? "" : " + ";
    text += word + (numbers.size() > 1 ? "s " : " ");
    for (std::size_t i = 0; i < numbers.size(); ++i) text += (i ? ", " : "") + numbers[i];
  }
  return text;
}

std::string location_label(const sim::Run& run, const sim::Location& location) {
  if (location.count == 0) return "nothing (an empty chunk)";
  if (location.region < 0) return "bytes " + range_text(location.offset, location.offset + location.count);
  const sim::Region& region = run.regions[location.region];
  const std::size_t end = location.offset + location.count;
  std::string words;
  if (region.kind == sim::RegionKind::User && holds_blocks(run, region)) {
    words = chunk_words(equal_blocks(run.count, run.ranks), location.offset, end, "block");
    if (!words.empty()) words += " of its " + display_name(run, region);
  } else if (location.offset == 0 && location.count == region.count) {
    if (region.kind == sim::RegionKind::User && region.count == run.count) return "its tensor";
    return "its " + short_name(display_name(run, region));
  } else if (region.kind == sim::RegionKind::User && region.count == run.count) {
    words = chunk_words(split_even(region.count, run.ranks), location.offset, end, "chunk");
  }
  if (words.empty()) words = "elements " + range_text(location.offset, end);
  if (region.kind == sim::RegionKind::Scratch || region.name == "params" ||
      region.name == "update" || region.name == "pulled")
    words += " of " + region.name;
  return words;
}

std::string frame_sentence(const Recording& recording, const FrameRef& frame) {
  const Act& act = recording.acts.at(static_cast<std::size_t>(frame.act));
  if (act.training) return training_sentence(act, static_cast<int>(frame.step));
  const sim::Run& run = act.run;
  const std::string part =
      recording.acts.size() > 1 ? " (part " + std::to_string(frame.act + 1) + " of " +
                                      std::to_string(recording.acts.size()) + ")"
                                : "";
  if (frame.step == 0)
    return recording.acts[frame.act].title + part + ", before step 1: every " +
           (run.operation == "parameter_server" ? "server and worker" : "rank") +
           " holds its input";
  std::string sentence = "step " + std::to_string(frame.step) + " of " +
                         std::to_string(run.steps) + part + ", " + phase_name(run, frame.step) +
                         ": ";
  const auto in_step = run.messages_in(frame.step);
  if (in_step.empty()) {
    sentence += "no messages; ranks work on their own buffers";
    return sentence;
  }
  // A message that carries something tells more than an empty chunk.
  std::vector<sim::Message> messages(in_step.begin(), in_step.end());
  std::stable_partition(messages.begin(), messages.end(),
                        [](const sim::Message& m) { return m.bytes > 0; });
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
  if (act.training)
    return build_training_frame(act, static_cast<int>(frame.step),
                                recording.sentences.at(static_cast<std::size_t>(frame_index)));
  const sim::Run& run = act.run;
  FrameView view;
  view.act_title = act.title;
  view.position = frame.step == 0 ? "before step 1"
                                  : "step " + std::to_string(frame.step) + " of " +
                                        std::to_string(run.steps);
  view.sentence = recording.sentences.at(static_cast<std::size_t>(frame_index));
  if (!run.values_recorded) view.values_note = run.values_note;

  sim::Replay replay(run);
  if (frame.step > 0) replay.seek(frame.step);

  // Regions written in this frame (step 1's frame also shows step 0's set-up).
  std::set<int> written;
  if (frame.step > 0)
    for (sim::Step k = frame.step == 1 ? 0 : frame.step; k <= frame.step; ++k)
      for (const sim::Write& w : run.writes_in(k)) written.insert(w.dst.region);

  // Regions a message of this step was read from.
  std::set<int> read;
  if (frame.step > 0)
    for (const sim::Message& message : run.messages_in(frame.step))
      read.insert(message.from.region);

  for (int rank = 0; rank < run.ranks; ++rank) {
    view.legend.push_back(has_roles(run)
                              ? role_of(run, rank) + " (rank " + std::to_string(rank) + ")"
                              : "r" + std::to_string(rank));
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
      if (!shown_at(run, region, frame.step) && written.count(id) == 0 && read.count(id) == 0)
        continue;
      BufferView buffer;
      buffer.name = region.name;
      buffer.label = display_name(run, region);
      buffer.primary = id == primary;
      buffer.scratch = !is_user_region(run, region);
      buffer.changed = written.count(id) > 0;
      buffer.sent = read.count(id) > 0;
      const Tensor tensor = replay.tensor(id);
      buffer.block = tensor.numel();
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
        buffer.cells.push_back({element_text(tensor, i), replay.provenance_at(id, i)});
      if (buffer.primary) {
        const bool collective = run.operation != "parameter_server";
        panel.line = capitalized(panel.role) + " has " +
                     (collective ? std::string("data") : region.name) + " " + buffer.printed;
      }
      panel.buffers.push_back(std::move(buffer));
    }
    if (panel.line.empty()) panel.line = capitalized(panel.role) + " has no data";  // barrier
    view.ranks.push_back(std::move(panel));
  }

  if (frame.step > 0) {
    for (const sim::Message& message : run.messages_in(frame.step)) {
      view.arrows.push_back({message.src, message.dst,
                             message.bytes == 0 ? empty_message_name(run)
                                                : location_label(run, message.from) + " (" +
                                                      payload_text(run, message) + ")",
                             message.reduced});
      view.message_lines.push_back(message_clause(run, message) + " [" +
                                   std::to_string(message.bytes) + " B]");
      view.ranks[message.src].sends = true;
      view.ranks[message.dst].receives = true;
    }
  }

  CostView& cost = view.cost;
  const sim::Prediction& prediction = act.prediction;
  cost.total_seconds = prediction.total_s;
  cost.size_bytes = prediction.size_bytes;
  cost.algbw_GBps = prediction.algbw_GBps;
  cost.busbw_GBps = prediction.busbw_GBps;
  cost.total_bytes_sent = run.bytes_sent;
  cost.step_bytes_sent.assign(static_cast<std::size_t>(run.ranks), 0);
  if (frame.step > 0 && frame.step < prediction.steps.size()) {
    const sim::StepCost& step = prediction.steps[frame.step];
    cost.has_step = true;
    cost.step_seconds = step.seconds;
    cost.elapsed_seconds = step.start_s + step.seconds;
    cost.bottleneck = with_role_names(run, step.bottleneck);
    cost.step_bytes = step.bytes;
    for (const sim::Message& message : run.messages_in(frame.step))
      cost.step_bytes_sent[static_cast<std::size_t>(message.src)] += message.bytes;
  }
  return view;
}

}  // namespace ringlab::gui
