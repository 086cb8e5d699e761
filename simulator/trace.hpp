// Chrome trace JSON (the "Trace Event Format" that Perfetto and
// chrome://tracing load): a lane per rank, slices for send / recv / reduce /
// copy, flow arrows from each send to its receive.
//
// TraceWriter streams events and keeps files bounded: past max_events it
// stops writing single events, counts what it drops per lane, and at close()
// writes one "aggregated" slice per lane and a note in "otherData" saying so.
// It formats events by hand, one per line (trace.cpp says why: speed);
// merge_traces() reads files with nlohmann-json and combines per-rank files
// (from a TCP run: one per process) into one.
//
// Flow ids are computed from (src, dst, tag, k), k = how many messages went
// on that (src, dst, tag) before: the sender and the receiver compute the same
// id on their own, which is what lets per-rank files be merged.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/cost.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"

namespace ringlab::sim {

// The single events a trace holds before it aggregates the rest per lane,
// unless told otherwise (a traced launch's ranks share it).
inline constexpr std::size_t kTraceEventLimit = 200000;

// How TraceWriter and the functions below write one trace file.
struct TraceOptions {
  std::size_t max_events = kTraceEventLimit;  // beyond this, events are aggregated per lane
  std::string process_name = "ringlab";
  // write_rank_trace: the steady-clock time (ns) shown as 0, so the ranks of
  // one job, given the same origin, start near 0 like a simulated trace.
  std::int64_t time_origin_ns = 0;
  // write_rank_trace: worlds whose processes each count their messages from
  // 0 but end up in one file (a program running several worlds, each with
  // fresh processes) give each world its own series, so arrow ids differ.
  std::uint32_t flow_series = 0;
  // write_rank_trace: the collectives the rank marked
  // (RecordOptions::collectives), each with every event and kept value, in
  // otherData.ringlab_walkthroughs (walkthrough_file.hpp), for `ringlab
  // replay`; they share max_events.
  bool walkthroughs = false;
};

std::uint64_t flow_id(int src, int dst, Tag tag, std::uint64_t k);

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, TraceOptions options);
  ~TraceWriter();  // closes if not closed
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void lane(int rank, std::string_view name);  // names a lane (always written)
  // A slice on lane `rank`; args_json is the inside of an object ("\"bytes\":8").
  void slice(int rank, std::string_view name, std::string_view category, double ts_us,
             double dur_us, std::string_view args_json = {});
  // Flow arrow ends; each must fall inside a slice on its lane.
  void flow_start(std::uint64_t id, int rank, double ts_us);
  void flow_end(std::uint64_t id, int rank, double ts_us);
  void note(std::string_view text);  // goes to otherData.notes
  // otherData[key] = json (a JSON value's text), written by close().
  void other_data(std::string_view key, std::string json);
  void close();

  std::size_t written() const { return written_; }
  std::size_t dropped() const { return dropped_total_; }

 private:
  bool admit(int rank, double ts_us, double dur_us);
  void emit(const std::string& line);

  std::ostream& out_;
  TraceOptions options_;
  bool closed_ = false;
  bool first_ = true;
  std::size_t written_ = 0, dropped_total_ = 0;
  struct Dropped {
    std::size_t count = 0;
    double first_us = 0, last_us = 0;
  };
  std::vector<Dropped> dropped_;  // per lane
  std::vector<std::string> notes_;
  std::vector<std::pair<std::string, std::string>> other_data_;
};

// The simulated run on the cost model's time axis: step k spans
// [start_s, start_s + seconds); within it each port's messages follow each
// other, reductions come after the step's communication.
void write_trace(const Run& run, const Prediction& prediction, const CostModel& model,
                 std::ostream& out, TraceOptions options = {});

// One rank of a real run (a RecordingTransport with wall_clock = true) on
// wall-clock time: a per-rank file that merge_traces() combines.
void write_rank_trace(const RankLog& log, std::ostream& out, TraceOptions options = {});

// Combines Chrome trace files (those TraceWriter writes, or a merged one)
// into `output`, written atomically (it may be one of the inputs); keeps the
// first naming of the process and of each lane, every note and every rank's
// walkthroughs (otherData.ringlab_walkthroughs). Returns how
// many events it wrote. Throws std::runtime_error naming a file that cannot
// be read or is not a trace.
std::size_t merge_traces(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace ringlab::sim
