#include "gui/frame_words.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <span>

#include "primitives/collectives.hpp"
#include "primitives/comm.hpp"

namespace ringlab::gui {

namespace {

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

// Whether the run is one collective, whose user buffer of the tensor's size
// is the article's tensor (a training step's buckets are not).
bool is_collective(const sim::Run& run) { return find_collective(run.operation) != nullptr; }

bool is_the_tensor(const sim::Run& run, const sim::Region& region) {
  return region.kind == sim::RegionKind::User && region.count == run.count && is_collective(run);
}

// A training step's record: its all_reduces run on the buckets, in chunks.
bool is_training_run(const sim::Run& run) {
  return run.operation == "ddp_step" || run.operation == "horovod_step";
}

// Whether a range's words name its buffer: scratch, the parameter server's
// buffers and a training step's buckets are several per rank.
bool names_its_buffer(const sim::Run& run, const sim::Region& region) {
  return region.kind == sim::RegionKind::Scratch || !is_collective(run);
}

// Sorted ranks as runs: "0,2-3", "5".
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

// ---- ranks ------------------------------------------------------------------

std::string role_of(const sim::Run& run, int rank) {
  if (rank >= 0 && static_cast<std::size_t>(rank) < run.roles.size()) return run.roles[rank];
  return "rank " + std::to_string(rank);
}

bool has_roles(const sim::Run& run) {
  for (const std::string& role : run.roles)
    if (role.rfind("rank ", 0) != 0) return true;
  return false;
}

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

namespace {

// Ranks with roles, grouped by the role's word: "server 1", "worker 0",
// "worker 2" -> {"server", {"1"}}, {"worker", {"0", "2"}}.
std::vector<std::pair<std::string, std::vector<std::string>>> role_groups(const sim::Run& run,
                                                                          const sim::RankSet& set) {
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
  return groups;
}

}  // namespace

std::string provenance_text(const sim::Run& run, const sim::RankSet& set) {
  if (set.empty()) return set.to_string();
  if (!has_roles(run)) {
    // "r0+r3", and runs of three or more as "r3-r7": "r0+r3-r7"; "all ranks".
    const std::vector<int> ranks = set.ranks();
    if (static_cast<int>(ranks.size()) == run.ranks && run.ranks > 2) return "all ranks";
    std::string text;
    for (std::size_t i = 0; i < ranks.size();) {
      std::size_t j = i;
      while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
      text += (text.empty() ? "r" : "+r") + std::to_string(ranks[i]);
      if (j >= i + 2) {
        text += "-r" + std::to_string(ranks[j]);
        i = j + 1;
      } else {
        i = i + 1;
      }
    }
    return text;
  }
  // "server 1 + workers 0, 2"
  std::string text;
  for (const auto& [word, numbers] : role_groups(run, set)) {
    text += text.empty() ? "" : " + ";
    text += word + (numbers.size() > 1 ? "s " : " ");
    for (std::size_t i = 0; i < numbers.size(); ++i) text += (i ? ", " : "") + numbers[i];
  }
  return text;
}

std::string cell_ranks_text(const sim::Run& run, const sim::RankSet& set) {
  if (set.empty()) return {};
  const std::vector<int> ranks = set.ranks();
  if (static_cast<int>(ranks.size()) == run.ranks && run.ranks > 1) return "all";
  if (!has_roles(run)) return rank_ranges(ranks);
  // "s1 w0,2"
  std::string text;
  for (const auto& [word, numbers] : role_groups(run, set)) {
    text += (text.empty() ? "" : " ") + word.substr(0, 1);
    for (std::size_t i = 0; i < numbers.size(); ++i) text += (i ? "," : "") + numbers[i];
  }
  return text;
}

// ---- buffers ----------------------------------------------------------------

bool is_user_region(const sim::Run& run, const sim::Region& region) {
  // The parameter server's headers, keys and replies are staging for one
  // message each: scratch as far as the learner is concerned (the recorder
  // counts every named buffer as the program's).
  if (run.operation == "parameter_server")
    return region.name == "params" || region.name == "update" || region.name == "pulled";
  return region.kind == sim::RegionKind::User;
}

bool holds_blocks(const sim::Run& run, const sim::Region& region) {
  return run.count > 0 && run.ranks > 1 && is_collective(run) &&
         region.count == run.count * static_cast<std::size_t>(run.ranks);
}

std::string display_name(const sim::Run& run, const sim::Region& region) {
  if (run.operation == "scatter" && region.name == "send") return "scatter_list";
  if (run.operation == "gather" && region.name == "recv") return "gather_list";
  if (run.operation == "all_gather" && region.name == "buf") return "tensor_list";
  return region.name;
}

// ---- messages ---------------------------------------------------------------

std::string location_label(const sim::Run& run, const sim::Location& location) {
  if (location.count == 0) return "nothing (an empty chunk)";
  if (location.region < 0)
    return "bytes " + range_text(location.offset, location.offset + location.count);
  const sim::Region& region = run.regions[static_cast<std::size_t>(location.region)];
  const std::size_t end = location.offset + location.count;
  std::string words;
  if (region.kind == sim::RegionKind::User && holds_blocks(run, region)) {
    words = chunk_words(equal_blocks(run.count, run.ranks), location.offset, end, "block");
    if (!words.empty()) words += " of its " + display_name(run, region);
  } else if (location.offset == 0 && location.count == region.count) {
    if (is_the_tensor(run, region)) return "its tensor";
    return "its " + short_name(display_name(run, region));
  } else if (is_the_tensor(run, region) || is_training_run(run)) {
    words = chunk_words(split_even(region.count, run.ranks), location.offset, end, "chunk");
  }
  if (words.empty()) words = "elements " + range_text(location.offset, end);
  if (names_its_buffer(run, region)) words += " of " + short_name(region.name);
  return words;
}

std::string payload_text(const sim::Run& run, const sim::Message& message) {
  sim::RankSet all;
  for (const sim::ProvRun& part : run.runs(message.payload)) all = all.unite(run.set(part.set));
  return provenance_text(run, all);
}

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

std::vector<sim::Message> messages_as_told(const sim::Run& run, sim::Step step) {
  const auto in_step = run.messages_in(step);
  std::vector<sim::Message> messages(in_step.begin(), in_step.end());
  std::stable_partition(messages.begin(), messages.end(),
                        [](const sim::Message& m) { return m.bytes > 0; });
  return messages;
}

std::string empty_message_name(const sim::Run& run) {
  return run.operation == "barrier" ? "empty message" : "empty chunk";
}

std::string message_clause(const sim::Run& run, const sim::Message& message) {
  if (message.bytes == 0)
    return role_of(run, message.src) + " sends " + role_of(run, message.dst) + " an " +
           empty_message_name(run) + (message.delivered ? "" : ", which it never receives");
  std::string clause = role_of(run, message.src) + " sends " + location_label(run, message.from) +
                       " to " + role_of(run, message.dst);
  if (!message.delivered) return clause + ", which never receives it (the run failed)";
  if (message.reduced) return clause + ", which " + op_verb(message.reduce_op);
  if (message.to.region < 0)
    return clause + ", which stores it as its " + location_label(run, message.to);
  const sim::Region& landing = run.regions[static_cast<std::size_t>(message.to.region)];
  if (!is_user_region(run, landing))
    return clause + ", which receives it into its " + short_name(landing.name);
  if (message.to.offset == 0 && message.to.count == landing.count)
    return clause + ", which stores it in its " +
           (is_the_tensor(run, landing) ? std::string("tensor") : display_name(run, landing));
  return clause + ", which stores it as its " + location_label(run, message.to);
}

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
    if (algorithm == "binary_tree")
      return reduces ? "reduce up the tree" : "broadcast down the tree";
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

// ---- numbers ----------------------------------------------------------------

std::string seconds_text(double seconds) {
  char text[32];
  if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  else if (seconds < 1.0)
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  return text;
}

std::string value_text(double value, DType dtype) {
  if (dtype == DType::Bool) return value != 0 ? "True" : "False";
  char text[32];
  if (!is_floating(dtype))
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  else
    std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

std::string element_text(const Tensor& tensor, std::size_t i) {
  if (tensor.dtype() == DType::Bool) return tensor.item_as_double(i) != 0 ? "True" : "False";
  return value_text(tensor.item_as_double(i), tensor.dtype());
}

std::string number_text(double value) { return value_text(value, DType::Float64); }

std::string list_text(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return text;
}

std::string capitalized(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace ringlab::gui
