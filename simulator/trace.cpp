#include "simulator/trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>

#include "ops/atomic_file.hpp"
#include "simulator/walkthrough_file.hpp"

namespace ringlab::sim {

namespace {

// The writer formats its events by hand, which was measured faster than a
// nlohmann::json object per event (a traced tcp rank rewrites its file after
// every world); everything that reads JSON (merge_traces, the tests) uses
// nlohmann-json. Measurements: docs/benchmarks.md, "Measurements behind the
// simulator's code".
std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

constexpr std::string_view kHeader = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";

}  // namespace

std::uint64_t flow_id(int src, int dst, Tag tag, std::uint64_t k) {
  // FNV-1a over the four fields; 53 bits so JSON readers keep it exact.
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint64_t v :
       {static_cast<std::uint64_t>(src), static_cast<std::uint64_t>(dst), tag, k}) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  }
  return h & ((std::uint64_t{1} << 53) - 1);
}

TraceWriter::TraceWriter(std::ostream& out, TraceOptions options)
    : out_(out), options_(std::move(options)) {
  out_ << kHeader << '\n';
  emit("{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"" +
       escape(options_.process_name) + "\"}}");
}

TraceWriter::~TraceWriter() {
  try {
    close();
  } catch (...) {
  }
}

void TraceWriter::emit(const std::string& line) {
  if (!first_) out_ << ",\n";
  first_ = false;
  out_ << line;
}

void TraceWriter::lane(int rank, std::string_view name) {
  emit("{\"ph\":\"M\",\"pid\":0,\"tid\":" + std::to_string(rank) +
       ",\"name\":\"thread_name\",\"args\":{\"name\":\"" + escape(name) + "\"}}");
  emit("{\"ph\":\"M\",\"pid\":0,\"tid\":" + std::to_string(rank) +
       ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(rank) + "}}");
}

bool TraceWriter::admit(int rank, double ts_us, double dur_us) {
  if (written_ < options_.max_events) {
    ++written_;
    return true;
  }
  const auto lane = static_cast<std::size_t>(std::max(rank, 0));
  if (dropped_.size() <= lane) dropped_.resize(lane + 1);
  Dropped& d = dropped_[lane];
  if (d.count == 0) d.first_us = ts_us;
  d.first_us = std::min(d.first_us, ts_us);
  d.last_us = std::max(d.last_us, ts_us + dur_us);
  ++d.count;
  ++dropped_total_;
  return false;
}

void TraceWriter::slice(int rank, std::string_view name, std::string_view category, double ts_us,
                        double dur_us, std::string_view args_json) {
  if (!admit(rank, ts_us, dur_us)) return;
  std::string line = "{\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(rank) + ",\"name\":\"" +
                     escape(name) + "\",\"cat\":\"" + escape(category) +
                     "\",\"ts\":" + number(ts_us) + ",\"dur\":" + number(dur_us);
  if (!args_json.empty()) line += ",\"args\":{" + std::string(args_json) + "}";
  emit(line + "}");
}

void TraceWriter::flow_start(std::uint64_t id, int rank, double ts_us) {
  if (!admit(rank, ts_us, 0)) return;
  emit("{\"ph\":\"s\",\"pid\":0,\"tid\":" + std::to_string(rank) +
       ",\"name\":\"message\",\"cat\":\"message\",\"id\":" + std::to_string(id) +
       ",\"ts\":" + number(ts_us) + "}");
}

void TraceWriter::flow_end(std::uint64_t id, int rank, double ts_us) {
  if (!admit(rank, ts_us, 0)) return;
  emit("{\"ph\":\"f\",\"bp\":\"e\",\"pid\":0,\"tid\":" + std::to_string(rank) +
       ",\"name\":\"message\",\"cat\":\"message\",\"id\":" + std::to_string(id) +
       ",\"ts\":" + number(ts_us) + "}");
}

void TraceWriter::note(std::string_view text) { notes_.emplace_back(text); }

void TraceWriter::other_data(std::string_view key, std::string json) {
  other_data_.emplace_back(std::string(key), std::move(json));
}

void TraceWriter::close() {
  if (closed_) return;
  closed_ = true;
  if (dropped_total_ > 0) {
    notes_.push_back("event limit " + std::to_string(options_.max_events) +
                     " reached: " + std::to_string(dropped_total_) +
                     " later events are aggregated into one 'aggregated' slice per lane");
    for (std::size_t lane = 0; lane < dropped_.size(); ++lane) {
      const Dropped& d = dropped_[lane];
      if (d.count == 0) continue;
      emit("{\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(lane) +
           ",\"name\":\"aggregated\",\"cat\":\"aggregated\",\"ts\":" + number(d.first_us) +
           ",\"dur\":" + number(d.last_us - d.first_us) +
           ",\"args\":{\"events\":" + std::to_string(d.count) + "}}");
    }
  }
  out_ << "\n],\"otherData\":{\"notes\":[";
  for (std::size_t i = 0; i < notes_.size(); ++i)
    out_ << (i ? "," : "") << '"' << escape(notes_[i]) << '"';
  out_ << "]";
  for (const auto& [key, json] : other_data_) out_ << ",\"" << escape(key) << "\":" << json;
  out_ << "}}\n";
  out_.flush();
}

// ---- the simulated run ----------------------------------------------------------

namespace {

constexpr double kMicroseconds = 1e6;

// Too many events for single ones: one slice per rank per window of steps,
// no arrows.
void write_step_windows(const Run& run, const Prediction& prediction, std::size_t detailed,
                        std::size_t budget, TraceWriter& writer) {
  const std::size_t steps = run.steps + 1;
  const std::size_t lanes = static_cast<std::size_t>(std::max(run.ranks, 1));
  const std::size_t windows = std::max<std::size_t>(1, std::min(steps, budget / lanes));
  const std::size_t per_window = (steps + windows - 1) / windows;
  writer.note("run too large for single events (" + std::to_string(detailed) + " > limit " +
              std::to_string(budget) + "): each slice aggregates " + std::to_string(per_window) +
              " step(s) of one rank, and flow arrows are left out");
  for (std::size_t first = 0; first < steps; first += per_window) {
    const std::size_t last = std::min(steps, first + per_window);
    std::vector<std::size_t> sends(lanes, 0), recvs(lanes, 0), bytes(lanes, 0);
    for (std::size_t k = first; k < last; ++k)
      for (const Message& m : run.messages_in(static_cast<Step>(k))) {
        ++sends[static_cast<std::size_t>(m.src)];
        ++recvs[static_cast<std::size_t>(m.dst)];
        bytes[static_cast<std::size_t>(m.src)] += m.bytes;
      }
    const double t0 = prediction.steps[first].start_s * kMicroseconds;
    const double t1 =
        (prediction.steps[last - 1].start_s + prediction.steps[last - 1].seconds) * kMicroseconds;
    for (std::size_t r = 0; r < lanes; ++r) {
      if (sends[r] + recvs[r] == 0) continue;
      writer.slice(
          static_cast<int>(r), "steps " + std::to_string(first) + ".." + std::to_string(last - 1),
          "aggregated", t0, t1 - t0,
          "\"sends\":" + std::to_string(sends[r]) + ",\"recvs\":" + std::to_string(recvs[r]) +
              ",\"bytes_sent\":" + std::to_string(bytes[r]));
    }
  }
}

// Step k's messages, each port's one after another from the step's start.
void write_step_messages(const Run& run, Step k, const StepCost& cost, const CostModel& model,
                         TraceWriter& writer) {
  std::vector<double> send_busy(static_cast<std::size_t>(run.ranks), 0.0),
      recv_busy(static_cast<std::size_t>(run.ranks), 0.0);
  const double start = cost.start_s * kMicroseconds;
  for (const Message& m : run.messages_in(k)) {
    const double dur = (model.alpha_s + static_cast<double>(m.bytes) * model.beta()) * kMicroseconds;
    const auto src = static_cast<std::size_t>(m.src), dst = static_cast<std::size_t>(m.dst);
    const double send_at = start + send_busy[src];
    const double recv_at = start + recv_busy[dst];
    send_busy[src] += dur;
    recv_busy[dst] += dur;
    const std::string args =
        "\"bytes\":" + std::to_string(m.bytes) + ",\"step\":" + std::to_string(k) +
        ",\"tag\":\"" + escape(describe_tag(m.tag)) + "\",\"provenance\":\"" +
        (m.payload.count ? escape(run.set(run.runs(m.payload)[0].set).to_string()) : "-") + "\"";
    writer.slice(m.src, "send to " + std::to_string(m.dst), "send", send_at, dur, args);
    writer.flow_start(m.id, m.src, send_at);
    writer.slice(m.dst, "recv from " + std::to_string(m.src), "recv", recv_at, dur, args);
    writer.flow_end(m.id, m.dst, recv_at + dur / 2);
  }
}

// Step k's local work (reduce, copy, divide), after its communication.
void write_step_local_work(const Run& run, Step k, const StepCost& cost, const CostModel& model,
                           TraceWriter& writer) {
  std::vector<double> local_busy(static_cast<std::size_t>(run.ranks), 0.0);
  const double start = cost.start_s * kMicroseconds;
  for (const Write& w : run.writes_in(k)) {
    if (w.kind == WriteKind::Receive) continue;
    const auto& region = run.regions[static_cast<std::size_t>(w.dst.region)];
    const double bytes = static_cast<double>(w.dst.count * element_size(region.dtype));
    const double dur =
        w.kind == WriteKind::Reduce ? model.gamma_s_per_byte * bytes * kMicroseconds : 0.0;
    const auto r = static_cast<std::size_t>(w.rank);
    const double at = start + cost.comm_s * kMicroseconds + local_busy[r];
    local_busy[r] += dur;
    const char* what = w.kind == WriteKind::Reduce ? "reduce"
                       : w.kind == WriteKind::Copy ? "copy"
                                                   : "divide";
    writer.slice(w.rank, std::string(what) + " " + region.name, what, at, dur,
                 "\"elements\":" + std::to_string(w.dst.count) + ",\"step\":" + std::to_string(k));
  }
}

}  // namespace

void write_trace(const Run& run, const Prediction& prediction, const CostModel& model,
                 std::ostream& out, TraceOptions options) {
  const std::size_t detailed = 2 * run.messages.size() * 2 + run.writes.size();
  TraceWriter writer(out, options);
  for (int r = 0; r < run.ranks; ++r) writer.lane(r, run.roles[static_cast<std::size_t>(r)]);
  writer.note(run.operation + " " + run.algorithm + " on " + std::to_string(run.ranks) +
              " ranks; times from the cost model (topology " +
              std::string(topology_name(model.topology)) + ")");
  if (detailed > options.max_events) {
    write_step_windows(run, prediction, detailed, options.max_events, writer);
  } else {
    for (Step k = 0; k <= run.steps; ++k) {
      write_step_messages(run, k, prediction.steps[k], model, writer);
      write_step_local_work(run, k, prediction.steps[k], model, writer);
    }
  }
  writer.close();
}

// ---- one rank of a real run ---------------------------------------------------------

namespace {

// The rank's marked collectives, for `ringlab replay` (walkthrough_file.hpp).
void add_walkthroughs(TraceWriter& writer, const RankLog& log, const TraceOptions& options,
                      std::int64_t origin) {
  WalkthroughFileOptions file;
  file.series = options.flow_series;
  file.process = options.process_name;
  file.time_origin_ns = origin;
  file.max_events = options.max_events;
  writer.other_data(kWalkthroughsKey, "[" + walkthroughs_json(log, file) + "]");
}

}  // namespace

void write_rank_trace(const RankLog& log, std::ostream& out, TraceOptions options) {
  if (log.wall_ns.size() != log.events.size())
    throw std::invalid_argument("rank " + std::to_string(log.rank) +
                                ": the log has no wall-clock times; record with "
                                "RecordOptions::wall_clock = true");
  TraceWriter writer(out, options);
  writer.lane(log.rank, "rank " + std::to_string(log.rank));
  struct Posted {
    bool is_send;
    int peer;
    Tag tag;
    std::uint64_t k;
    std::size_t bytes;
    std::int64_t posted_ns;
  };
  std::map<std::uint32_t, Posted> requests;
  std::map<std::tuple<int, int, Tag>, std::uint64_t> channel_counts;
  auto esize = [&](std::int32_t region) {
    return region < 0 ? std::size_t{1}
                      : element_size(log.regions[static_cast<std::size_t>(region)].dtype);
  };
  const std::int64_t origin = options.time_origin_ns;
  auto us = [origin](std::int64_t ns) { return static_cast<double>(ns - origin) / 1000.0; };
  for (std::size_t i = 0; i < log.events.size(); ++i) {
    const Event& e = log.events[i];
    const auto [begin, end] = log.wall_ns[i];
    switch (e.kind) {
      case EventKind::PostSend:
      case EventKind::PostRecv: {
        const bool is_send = e.kind == EventKind::PostSend;
        const int src = is_send ? log.rank : e.peer, dst = is_send ? e.peer : log.rank;
        const std::uint64_t k =
            (std::uint64_t{options.flow_series} << 32) + channel_counts[{src, dst, e.tag()}]++;
        requests[e.request] = {is_send, e.peer, e.tag(), k, e.count * esize(e.region), begin};
        break;
      }
      case EventKind::Complete: {
        auto it = requests.find(e.request);
        if (it == requests.end()) break;
        const Posted& p = it->second;
        const int src = p.is_send ? log.rank : p.peer, dst = p.is_send ? p.peer : log.rank;
        const double t0 = us(p.posted_ns), t1 = us(end);
        const std::string args = "\"bytes\":" + std::to_string(p.bytes) + ",\"tag\":\"" +
                                 escape(describe_tag(p.tag)) + "\"";
        if (p.is_send) {
          writer.slice(log.rank, "send to " + std::to_string(p.peer), "send", t0, t1 - t0, args);
          writer.flow_start(flow_id(src, dst, p.tag, p.k), log.rank, t0);
        } else {
          writer.slice(log.rank, "recv from " + std::to_string(p.peer), "recv", t0, t1 - t0, args);
          writer.flow_end(flow_id(src, dst, p.tag, p.k), log.rank, t1);
        }
        requests.erase(it);
        break;
      }
      case EventKind::Copy:
      case EventKind::Reduce:
      case EventKind::Divide: {
        const char* what = e.kind == EventKind::Reduce ? "reduce"
                           : e.kind == EventKind::Copy ? "copy"
                                                       : "divide";
        // Named like write_trace's slices ("reduce buf") when the rank named the memory.
        const std::string name =
            e.region >= 0
                ? std::string(what) + " " + log.regions[static_cast<std::size_t>(e.region)].name
                : what;
        writer.slice(log.rank, name, what, us(begin), us(end) - us(begin),
                     "\"bytes\":" + std::to_string(e.count * esize(e.region)));
        break;
      }
      case EventKind::Alloc:
      case EventKind::Free:
        break;
    }
  }
  if (options.walkthroughs) add_walkthroughs(writer, log, options, origin);
  writer.close();
}

std::size_t merge_traces(const std::vector<std::string>& inputs, const std::string& output) {
  using nlohmann::json;
  // Each file's events are parsed, then kept as text: only one file's tree
  // is in memory at a time, and the trace limit bounds its time and memory
  // (docs/benchmarks.md, "Measurements behind the simulator's code").
  std::vector<std::string> events;
  json notes = json::array();
  json walkthroughs = json::array();
  // Metadata ("ph":"M") names the process and the lanes, the same in every
  // rank's file: the first naming of each (pid, tid, what) is kept. A lane
  // named again (its rank's file from a later world of the same job, or a
  // merged file merged again) keeps its first name.
  std::set<std::tuple<std::int64_t, std::int64_t, std::string>> named;
  for (const std::string& path : inputs) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read trace file '" + path + "'");
    try {
      json trace = json::parse(in);
      if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
        throw std::runtime_error("no \"traceEvents\" list");
      for (json& event : trace["traceEvents"]) {
        if (event.at("ph") == "M") {
          auto naming =
              std::tuple(event.at("pid").get<std::int64_t>(), event.value("tid", std::int64_t{-1}),
                         event.at("name").get<std::string>());
          if (!named.insert(std::move(naming)).second) continue;
        }
        events.push_back(event.dump());
      }
      const auto other = trace.find("otherData");
      if (other != trace.end() && other->contains("notes"))
        for (json& note : other->at("notes")) notes.push_back(std::move(note));
      if (other != trace.end() && other->contains(kWalkthroughsKey))
        for (json& entry : other->at(kWalkthroughsKey)) walkthroughs.push_back(std::move(entry));
    } catch (const std::exception& e) {
      throw std::runtime_error("'" + path +
                               "' is not a Chrome trace ringlab can merge: " + e.what());
    }
  }
  write_file_atomically(output, "trace file", [&](std::ostream& out) {
    // The layout TraceWriter writes: one event per line.
    out << kHeader << '\n';
    for (std::size_t i = 0; i < events.size(); ++i) out << (i ? ",\n" : "") << events[i];
    json other{{"notes", notes}};
    if (!walkthroughs.empty()) other[kWalkthroughsKey] = std::move(walkthroughs);
    out << "\n],\"otherData\":" << other.dump() << "}\n";
  });
  return events.size();
}

}  // namespace ringlab::sim
