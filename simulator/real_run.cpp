#include "simulator/real_run.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

#include "simulator/build_record.hpp"

namespace ringlab::sim {

namespace {

// Every rank's cut of one collective (nullptr: that rank's trace lacks it).
struct Group {
  std::uint32_t series = 0;
  std::size_t index = 0;
  int world = 0;
  std::vector<const WalkthroughLog*> ranks;
  std::vector<bool> traced;  // the rank's trace is there (with or without this collective)
};

std::vector<Group> group_by_collective(const std::vector<RankWalkthroughs>& entries) {
  std::map<std::pair<std::uint32_t, std::size_t>, Group> groups;
  std::map<std::uint32_t, std::vector<int>> traced;  // by series
  for (const RankWalkthroughs& entry : entries) {
    if (entry.world_size < 1 || entry.rank < 0 || entry.rank >= entry.world_size)
      throw std::runtime_error("a trace entry of rank " + std::to_string(entry.rank) +
                               " in a world of " + std::to_string(entry.world_size));
    traced[entry.series].push_back(entry.rank);
    for (const WalkthroughLog& w : entry.walkthroughs) {
      Group& g = groups[{entry.series, w.index}];
      if (g.ranks.empty()) {
        g = {entry.series, w.index, entry.world_size, {}, {}};
        g.ranks.assign(static_cast<std::size_t>(entry.world_size), nullptr);
        g.traced.assign(static_cast<std::size_t>(entry.world_size), false);
      }
      if (g.world != entry.world_size)
        throw std::runtime_error("rank " + std::to_string(entry.rank) + " says its world has " +
                                 std::to_string(entry.world_size) + " ranks, another rank " +
                                 std::to_string(g.world) + ": traces of different runs?");
      g.ranks[static_cast<std::size_t>(entry.rank)] = &w;
    }
  }
  std::vector<Group> out;
  for (auto& [key, g] : groups) {
    for (int r : traced[g.series])
      if (r < g.world) g.traced[static_cast<std::size_t>(r)] = true;
    out.push_back(std::move(g));
  }
  return out;
}

std::string call_text(const CollectiveMark& m) {
  return std::string(collective_name(m.collective)) + " (" + m.algorithm + ") of " +
         std::to_string(m.count) + " x " + std::string(dtype_name(m.dtype));
}

// The mark every present rank agrees on.
CollectiveMark agreed_mark(const Group& g, int& first_rank) {
  const WalkthroughLog* ref = nullptr;
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    const WalkthroughLog* w = g.ranks[r];
    if (!w) continue;
    if (!ref) {
      ref = w;
      first_rank = static_cast<int>(r);
      continue;
    }
    const CollectiveMark &a = ref->mark, &b = w->mark;
    if (a.collective != b.collective || a.algorithm != b.algorithm || a.count != b.count ||
        a.dtype != b.dtype || a.op != b.op || a.root != b.root)
      throw std::runtime_error("the ranks disagree on collective #" + std::to_string(g.index + 1) +
                               ": rank " + std::to_string(first_rank) + " ran " + call_text(a) +
                               ", rank " + std::to_string(r) + " " + call_text(b) +
                               ": are these traces of one run?");
  }
  CollectiveMark mark = ref->mark;
  mark.buffers.clear();
  return mark;
}

// A rank that left no trace: what the others received from it, sent from
// memory nobody named (bytes), never completed, so each travels as late as
// its receiver allows.
RankLog stand_in(int missing, int world, const Group& g) {
  RankLog log;
  log.rank = missing;
  log.world_size = world;
  std::uint32_t request = 0;
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    if (!g.ranks[r]) continue;
    const RankLog& theirs = g.ranks[r]->log;
    std::map<std::uint32_t, const Event*> posted;
    for (const Event& e : theirs.events) {
      if (e.kind == EventKind::PostRecv && e.peer == missing) posted[e.request] = &e;
      if (e.kind != EventKind::Complete || e.failed || !posted.count(e.request)) continue;
      const Event& post = *posted[e.request];
      Event send;
      send.kind = EventKind::PostSend;
      send.peer = static_cast<int>(r);
      send.tag_or_src_offset = post.tag();
      send.request = request++;
      const DType dtype =
          post.region < 0 ? DType::Int32 : theirs.regions[static_cast<std::size_t>(post.region)].dtype;
      send.count = post.region < 0 ? post.count : post.count * element_size(dtype);
      log.events.push_back(send);
    }
  }
  return log;
}

SampledValues sampled(const RankLog& log, const ValueSample& s, DType dtype) {
  SampledValues out;
  out.checksum = s.checksum;
  out.elements = s.elements;
  out.taken = s.taken() || s.checksum != 0;
  const std::size_t n = s.elements * element_size(dtype);
  if (s.taken() && s.offset + n <= log.values.size())
    out.bytes.assign(log.values.begin() + static_cast<long>(s.offset),
                     log.values.begin() + static_cast<long>(s.offset + n));
  return out;
}

void keep_rank_details(RealWalkthrough& out, const Group& g) {
  const auto P = g.ranks.size();
  out.wall_ns.assign(P, {});
  out.span_ns.assign(P, {0, 0});
  for (std::size_t r = 0; r < P; ++r) {
    const WalkthroughLog* w = g.ranks[r];
    if (!w) continue;
    out.wall_ns[r] = w->log.wall_ns;
    out.span_ns[r] = {w->mark.start_ns, w->mark.end_ns};
    for (const MarkedBuffer& b : w->mark.buffers) {
      if (b.region < 0 || static_cast<std::size_t>(b.region) >= w->log.regions.size()) continue;
      const LoggedRegion& region = w->log.regions[static_cast<std::size_t>(b.region)];
      RankBufferSamples s;
      s.rank = static_cast<int>(r);
      s.name = region.name;
      s.dtype = region.dtype;
      s.count = region.count;
      s.region = out.kept ? out.run.buffer_of(s.rank, s.name) : -1;
      s.before = sampled(w->log, b.before, region.dtype);
      s.after = sampled(w->log, b.after, region.dtype);
      out.samples.push_back(std::move(s));
    }
  }
}

RunInfo info_of(const RealWalkthrough& w, bool whole) {
  RunInfo info;
  info.operation = std::string(collective_name(w.mark.collective));
  info.algorithm = w.mark.algorithm;
  info.dtype = w.mark.dtype;
  info.op = w.mark.op;
  info.root = w.mark.root;
  info.count = w.mark.count;
  info.values_recorded = whole;
  if (!whole)
    info.values_note = w.missing.empty() && w.not_started.empty()
                           ? "values not recorded whole: the buffers are larger than a trace "
                             "keeps whole (or the trace's value budget was spent); each buffer's "
                             "first elements and checksum are kept"
                           : "values not recorded whole: some ranks have no trace of this "
                             "collective; each other buffer's first elements and checksum are "
                             "kept";
  return info;
}

RealWalkthrough walkthrough_of(const Group& g) {
  RealWalkthrough out;
  int first = 0;
  out.mark = agreed_mark(g, first);
  out.series = g.series;
  out.index = g.index;
  out.ranks = g.world;
  const WalkthroughLog* named = g.ranks[static_cast<std::size_t>(first)];
  out.name = !named->mark.label.empty()
                 ? named->mark.label
                 : std::string(collective_name(out.mark.collective)) + " #" +
                       std::to_string(g.index + 1);
  bool whole = true;
  std::vector<RankLog> logs;
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    const WalkthroughLog* w = g.ranks[r];
    if (!w) {
      (g.traced[r] ? out.not_started : out.missing).push_back(static_cast<int>(r));
      logs.push_back(stand_in(static_cast<int>(r), g.world, g));
      whole = false;
      continue;
    }
    out.kept = out.kept && w->kept;
    whole = whole && w->mark.whole_values;
    if (!w->mark.ok) out.failed.push_back(static_cast<int>(r));
    logs.push_back(w->log);
  }
  if (out.kept) out.run = build_run(std::move(logs), info_of(out, whole), &out.event_steps);
  keep_rank_details(out, g);
  return out;
}

}  // namespace

std::vector<RealWalkthrough> real_walkthroughs(const std::vector<RankWalkthroughs>& entries) {
  std::vector<RealWalkthrough> out;
  for (const Group& g : group_by_collective(entries)) out.push_back(walkthrough_of(g));
  return out;
}

std::vector<std::size_t> pick_walkthroughs(const std::vector<RealWalkthrough>& all,
                                           const std::string& which, const std::string& file) {
  if (all.empty())
    throw std::invalid_argument(
        file + " holds no walkthroughs: record one with `ringlab lesson NAME --trace " + file +
        "`, `ringlab run --trace " + file + " -- PROGRAM` or RINGLAB_TRACE=DIR (a trace "
        "written by `ringlab sim --trace` is of a simulated run: `ringlab sim` prints it)");
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (which.empty() || which == std::to_string(i + 1) || which == all[i].name)
      picked.push_back(i);
  if (picked.empty())
    throw std::invalid_argument("--walkthrough " + which + ": " + file + " has " +
                                std::to_string(all.size()) +
                                " walkthroughs; give a number from 1 or a name that "
                                "`ringlab replay " + file + " --list` shows");
  return picked;
}

std::string describe_collective(const CollectiveMark& mark, int ranks) {
  const CollectiveInfo& row = collective_info(mark.collective);
  const std::string name(collective_name(mark.collective));
  if (row.input == Shape::None)
    return name + ", algorithm " + mark.algorithm + ", " + std::to_string(ranks) +
           " ranks (no data)";
  std::string text = name + ", algorithm " + mark.algorithm + ", " + std::to_string(ranks) +
                     " ranks, " + std::to_string(mark.count) + " x " +
                     std::string(dtype_name(mark.dtype)) + " per rank (" +
                     std::to_string(mark.count * element_size(mark.dtype)) + " bytes)";
  if (row.reduces) text += ", op " + std::string(op_name(mark.op));
  if (row.rooted) text += ", root " + std::to_string(mark.root);
  return text;
}

std::string sim_command_for(const CollectiveMark& mark, int ranks) {
  const CollectiveInfo& row = collective_info(mark.collective);
  std::string text = "ringlab sim " + std::string(collective_name(mark.collective)) + " --algo " +
                     mark.algorithm + " --ranks " + std::to_string(ranks);
  if (row.input == Shape::None) return text;
  text += " --count " + std::to_string(mark.count) + " --dtype " +
          std::string(dtype_name(mark.dtype));
  if (row.reduces && mark.op != ReduceOp::SUM) text += " --redop " + std::string(op_name(mark.op));
  if (row.rooted) text += " --root " + std::to_string(mark.root);
  return text;
}

}  // namespace ringlab::sim
