#include "simulator/walkthrough_file.hpp"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ops/read_file.hpp"

namespace ringlab::sim {

namespace {

using nlohmann::json;

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<std::byte>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t chunk = 0;
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    for (std::size_t k = 0; k < 3; ++k)
      chunk = chunk << 8 | (k < n ? std::to_integer<std::uint32_t>(bytes[i + k]) : 0);
    for (std::size_t k = 0; k < 4; ++k)
      out += k <= n ? kAlphabet[chunk >> (18 - 6 * k) & 63] : '=';
  }
  return out;
}

std::vector<std::byte> from_base64(const std::string& text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i)
    value[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  std::vector<std::byte> out;
  std::uint32_t chunk = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0) throw std::runtime_error("values are not base64");
    chunk = chunk << 6 | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::byte>(chunk >> bits & 0xFF));
    }
  }
  return out;
}

// kNoValues as -1.
json offset_json(std::size_t offset) {
  return offset == kNoValues ? json(-1) : json(static_cast<std::uint64_t>(offset));
}
std::size_t offset_of(const json& j) {
  return j.get<std::int64_t>() < 0 ? kNoValues : j.get<std::size_t>();
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

constexpr const char* kRegionKinds[] = {"user", "scratch", "unknown"};

json region_json(const LoggedRegion& r) {
  return json::array({r.name, kRegionKinds[static_cast<int>(r.kind)], dtype_name(r.dtype), r.count,
                      r.input_offset, r.input_count, offset_json(r.initial_values),
                      r.alloc_event});
}

LoggedRegion region_of(const json& j) {
  LoggedRegion r;
  r.name = j.at(0).get<std::string>();
  const std::string kind = j.at(1).get<std::string>();
  r.kind = kind == "user" ? RegionKind::User : kind == "scratch" ? RegionKind::Scratch
                                                                 : RegionKind::Unknown;
  r.dtype = parse_dtype(j.at(2).get<std::string>());
  r.count = j.at(3).get<std::size_t>();
  r.input_offset = j.at(4).get<std::size_t>();
  r.input_count = j.at(5).get<std::size_t>();
  r.initial_values = offset_of(j.at(6));
  r.alloc_event = j.at(7).get<std::uint64_t>();
  return r;
}

json sample_json(const ValueSample& s) {
  return {{"offset", offset_json(s.offset)}, {"elements", s.elements}, {"checksum", hex(s.checksum)}};
}

ValueSample sample_of(const json& j) {
  ValueSample s;
  s.offset = offset_of(j.at("offset"));
  s.elements = j.at("elements").get<std::size_t>();
  s.checksum = std::stoull(j.at("checksum").get<std::string>(), nullptr, 16);
  return s;
}

// One event: kind, op, failed, peer, request, region, src_region, offset,
// count, tag or source offset, values before and after (-1: none), wall
// start and end (ns from the origin; absent without times).
json event_json(const WalkthroughLog& w, std::size_t i, std::int64_t origin) {
  const Event& e = w.log.events[i];
  json row = json::array({static_cast<int>(e.kind), op_name(e.op), e.failed ? 1 : 0, e.peer,
                          e.request, e.region, e.src_region, e.offset, e.count,
                          e.tag_or_src_offset});
  const bool values = w.log.event_values.size() == w.log.events.size();
  row.push_back(offset_json(values ? w.log.event_values[i].first : kNoValues));
  row.push_back(offset_json(values ? w.log.event_values[i].second : kNoValues));
  if (w.log.wall_ns.size() == w.log.events.size()) {
    row.push_back(w.log.wall_ns[i].first - origin);
    row.push_back(w.log.wall_ns[i].second - origin);
  }
  return row;
}

void add_event(WalkthroughLog& w, const json& row) {
  Event e;
  const int kind = row.at(0).get<int>();
  if (kind < 0 || kind > static_cast<int>(EventKind::Free))
    throw std::runtime_error("an event of kind " + std::to_string(kind));
  e.kind = static_cast<EventKind>(kind);
  e.op = parse_op(row.at(1).get<std::string>());
  e.failed = row.at(2).get<int>() != 0;
  e.peer = row.at(3).get<std::int32_t>();
  e.request = row.at(4).get<std::uint32_t>();
  e.region = row.at(5).get<std::int32_t>();
  e.src_region = row.at(6).get<std::int32_t>();
  e.offset = row.at(7).get<std::uint64_t>();
  e.count = row.at(8).get<std::uint64_t>();
  e.tag_or_src_offset = row.at(9).get<std::uint64_t>();
  w.log.events.push_back(e);
  w.log.event_values.emplace_back(offset_of(row.at(10)), offset_of(row.at(11)));
  if (row.size() >= 14)
    w.log.wall_ns.emplace_back(row.at(12).get<std::int64_t>(), row.at(13).get<std::int64_t>());
}

json mark_json(const CollectiveMark& m, std::int64_t origin) {
  json buffers = json::array();
  for (const MarkedBuffer& b : m.buffers)
    buffers.push_back({{"region", b.region}, {"before", sample_json(b.before)},
                       {"after", sample_json(b.after)}});
  return {{"collective", collective_name(m.collective)},
          {"algorithm", m.algorithm},
          {"count", m.count},
          {"dtype", dtype_name(m.dtype)},
          {"op", op_name(m.op)},
          {"root", m.root},
          {"label", m.label},
          {"ended", m.end_event != kNoValues},
          {"ok", m.ok},
          {"whole_values", m.whole_values},
          {"start_ns", m.start_ns - origin},
          {"end_ns", m.end_ns == 0 ? 0 : m.end_ns - origin},
          {"buffers", buffers}};
}

CollectiveMark mark_of(const json& j) {
  CollectiveMark m;
  m.collective = parse_collective(j.at("collective").get<std::string>());
  m.algorithm = j.at("algorithm").get<std::string>();
  m.count = j.at("count").get<std::size_t>();
  m.dtype = parse_dtype(j.at("dtype").get<std::string>());
  m.op = parse_op(j.at("op").get<std::string>());
  m.root = j.at("root").get<int>();
  m.label = j.at("label").get<std::string>();
  m.ok = j.at("ok").get<bool>();
  m.whole_values = j.at("whole_values").get<bool>();
  m.start_ns = j.at("start_ns").get<std::int64_t>();
  m.end_ns = j.at("end_ns").get<std::int64_t>();
  for (const json& b : j.at("buffers")) {
    MarkedBuffer buffer;
    buffer.region = b.at("region").get<int>();
    buffer.before = sample_of(b.at("before"));
    buffer.after = sample_of(b.at("after"));
    m.buffers.push_back(std::move(buffer));
  }
  if (!j.at("ended").get<bool>()) m.end_event = kNoValues;
  return m;
}

json walkthrough_json(const WalkthroughLog& w, std::int64_t origin, bool keep) {
  json out = mark_json(w.mark, origin);
  out["index"] = w.index;
  out["kept"] = keep;
  if (!keep) return out;
  json regions = json::array(), events = json::array();
  for (const LoggedRegion& r : w.log.regions) regions.push_back(region_json(r));
  for (std::size_t i = 0; i < w.log.events.size(); ++i) events.push_back(event_json(w, i, origin));
  out["regions"] = std::move(regions);
  out["events"] = std::move(events);
  out["values"] = base64(w.log.values);
  return out;
}

// An event's fields within what the walkthrough holds: a file that is not
// one ringlab wrote (or was damaged) gets an error, not a replay that reads
// past a buffer.
void check_range(const RankLog& log, int region, std::uint64_t offset, std::uint64_t count) {
  if (region < -1 || region >= static_cast<int>(log.regions.size()))
    throw std::runtime_error("an event names region " + std::to_string(region) + " of " +
                             std::to_string(log.regions.size()));
  if (region < 0) return;
  const std::uint64_t size = log.regions[static_cast<std::size_t>(region)].count;
  if (offset > size || count > size - offset)
    throw std::runtime_error("an event reaches elements [" + std::to_string(offset) + ", " +
                             std::to_string(offset + count) + ") of a region of " +
                             std::to_string(size));
}

void check_events(const RankLog& log) {
  for (const Event& e : log.events) {
    if (e.request >= log.events.size())
      throw std::runtime_error("an event of request " + std::to_string(e.request) + " among " +
                               std::to_string(log.events.size()) + " events");
    const bool message = e.kind == EventKind::PostSend || e.kind == EventKind::PostRecv;
    if (message && (e.peer < 0 || e.peer >= log.world_size))
      throw std::runtime_error("a message to or from rank " + std::to_string(e.peer) +
                               " in a world of " + std::to_string(log.world_size));
    if (e.kind == EventKind::Complete) continue;
    if ((e.kind == EventKind::Alloc || e.kind == EventKind::Free) && e.region < 0)
      throw std::runtime_error("an allocation of no region");
    const bool sized = message || e.kind == EventKind::Copy || e.kind == EventKind::Reduce ||
                       e.kind == EventKind::Divide;
    check_range(log, e.region, sized ? e.offset : 0, sized ? e.count : 0);
    if (e.kind == EventKind::Copy || e.kind == EventKind::Reduce)
      check_range(log, e.src_region, e.tag_or_src_offset, e.count);
  }
}

WalkthroughLog walkthrough_of(const json& j, int rank, int world_size) {
  WalkthroughLog w;
  w.mark = mark_of(j);
  w.index = j.at("index").get<std::size_t>();
  w.kept = j.at("kept").get<bool>();
  w.log.rank = rank;
  w.log.world_size = world_size;
  if (!w.kept) return w;
  for (const json& r : j.at("regions")) w.log.regions.push_back(region_of(r));
  for (const json& e : j.at("events")) add_event(w, e);
  check_events(w.log);
  w.log.values = from_base64(j.at("values").get<std::string>());
  w.mark.first_event = 0;
  if (w.mark.end_event != kNoValues) w.mark.end_event = w.log.events.size();
  for (const MarkedBuffer& b : w.mark.buffers)
    if (b.region < 0 || static_cast<std::size_t>(b.region) >= w.log.regions.size())
      throw std::runtime_error("a buffer of region " + std::to_string(b.region));
  return w;
}

RankWalkthroughs rank_of(const json& j) {
  if (j.at("format").get<int>() != kWalkthroughFormat)
    throw std::runtime_error("walkthroughs of format " + j.at("format").dump() +
                             "; this ringlab reads format " + std::to_string(kWalkthroughFormat));
  RankWalkthroughs r;
  r.rank = j.at("rank").get<int>();
  r.world_size = j.at("world_size").get<int>();
  if (r.world_size < 1 || r.rank < 0 || r.rank >= r.world_size)
    throw std::runtime_error("an entry of rank " + std::to_string(r.rank) + " in a world of " +
                             std::to_string(r.world_size));
  r.series = j.at("series").get<std::uint32_t>();
  r.process = j.at("process").get<std::string>();
  for (const json& w : j.at("walkthroughs"))
    r.walkthroughs.push_back(walkthrough_of(w, r.rank, r.world_size));
  return r;
}

}  // namespace

std::string walkthroughs_json(const RankLog& log, const WalkthroughFileOptions& options) {
  json entry = {{"format", kWalkthroughFormat},
                {"rank", log.rank},
                {"world_size", log.world_size},
                {"series", options.series},
                {"process", options.process}};
  json walkthroughs = json::array();
  std::size_t events = 0;
  for (const WalkthroughLog& w : cut_walkthroughs(log)) {
    events += w.log.events.size();
    walkthroughs.push_back(walkthrough_json(w, options.time_origin_ns, events <= options.max_events));
  }
  entry["walkthroughs"] = std::move(walkthroughs);
  return entry.dump();
}

std::vector<RankWalkthroughs> read_walkthroughs(const std::string& trace_path) {
  const std::string text = read_regular_file(trace_path, "trace file", std::size_t{1} << 31);
  std::vector<RankWalkthroughs> ranks;
  try {
    const json trace = json::parse(text);
    if (!trace.is_object() || !trace.contains("traceEvents"))
      throw std::runtime_error("it has no \"traceEvents\": it is not a Chrome trace");
    const auto other = trace.find("otherData");
    if (other == trace.end() || !other->contains(kWalkthroughsKey)) return ranks;
    for (const json& entry : other->at(kWalkthroughsKey)) ranks.push_back(rank_of(entry));
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot read the walkthroughs of '" + trace_path + "': " + e.what());
  }
  return ranks;
}

}  // namespace ringlab::sim
