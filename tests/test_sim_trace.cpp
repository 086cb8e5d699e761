// Chrome trace files: valid JSON, a lane per rank, matched flow arrows,
// bounded size; per-rank files of a real (threaded) run merge into one.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "simulator/recording_transport.hpp"
#include "simulator/trace.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

using nlohmann::json;

json parse(const std::string& text) { return json::parse(text); }
json parse_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  return json::parse(in);
}

struct Summary {
  std::set<int> lanes;                        // tids named by thread_name
  std::map<std::string, int> slices;          // per category
  std::multiset<std::uint64_t> starts, ends;  // flow ids
  std::vector<std::string> notes;
};
Summary summarize(const json& trace) {
  Summary s;
  for (const json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "thread_name") s.lanes.insert(e.at("tid").get<int>());
    if (ph == "X") ++s.slices[e.at("cat").get<std::string>()];
    if (ph == "s") s.starts.insert(e.at("id").get<std::uint64_t>());
    if (ph == "f") s.ends.insert(e.at("id").get<std::uint64_t>());
  }
  for (const json& n : trace.at("otherData").at("notes")) s.notes.push_back(n);
  return s;
}

Run small_run() {
  Scenario s;
  s.collective = Collective::AllReduce;
  s.ranks = 4;
  s.count = 8;
  return simulate(s);
}

}  // namespace

TEST_CASE("names with quotes, backslashes, control characters and UTF-8 come back unchanged") {
  const std::string lane = "rank \"0\" \\ tab\tnewline\n\x01 \xc3\xa9\xe2\x86\x92";
  const std::string note = "a \"note\"\\ \x1f";
  std::ostringstream out;
  {
    TraceWriter w(out, {});
    w.lane(0, lane);
    w.slice(0, lane, "send", 0, 1);
    w.note(note);
  }
  const json trace = parse(out.str());
  bool named = false, sliced = false;
  for (const json& e : trace.at("traceEvents")) {
    named = named || (e.at("name") == "thread_name" && e.at("args").at("name") == lane);
    sliced = sliced || (e.at("ph") == "X" && e.at("name") == lane);
  }
  CHECK(named);
  CHECK(sliced);
  CHECK(trace.at("otherData").at("notes") == json::array({note}));
}

TEST_CASE("a simulated run's trace: lanes, slices and one arrow per message") {
  const Run run = small_run();
  CostModel model;
  model.gamma_s_per_byte = 1e-9;
  std::ostringstream out;
  write_trace(run, predict(run, model), model, out);
  const Summary s = summarize(parse(out.str()));
  CHECK(s.lanes == std::set<int>{0, 1, 2, 3});
  CHECK(s.slices.at("send") == static_cast<int>(run.messages.size()));
  CHECK(s.slices.at("recv") == static_cast<int>(run.messages.size()));
  CHECK(s.slices.at("reduce") == 4 * 3);  // P(P-1) reductions in the reduce-scatter half
  CHECK(s.starts.size() == run.messages.size());
  CHECK(s.starts == s.ends);
}

TEST_CASE("big traces are aggregated, and the file says so") {
  Scenario sc;
  sc.ranks = 32;
  sc.count = 64;
  const Run run = simulate(sc);
  CostModel model;
  std::ostringstream out;
  TraceOptions options;
  options.max_events = 500;
  write_trace(run, predict(run, model), model, out, options);
  const json trace = parse(out.str());
  const Summary s = summarize(trace);
  CHECK(s.lanes.size() == 32);
  CHECK(s.slices.count("send") == 0);
  CHECK(s.slices.at("aggregated") > 0);
  CHECK(trace.at("traceEvents").size() < 500 + 2 * 32 + 10);
  bool said = false;
  for (const auto& n : s.notes) said = said || n.find("aggregates") != std::string::npos;
  CHECK(said);
}

TEST_CASE("TraceWriter's event limit: later events become one aggregate slice per lane") {
  std::ostringstream out;
  TraceOptions options;
  options.max_events = 10;
  {
    TraceWriter w(out, options);
    w.lane(0, "rank 0");
    for (int i = 0; i < 100; ++i) w.slice(0, "send", "send", i, 1);
    CHECK(w.dropped() == 90);
  }
  const Summary s = summarize(parse(out.str()));
  CHECK(s.slices.at("send") == 10);
  CHECK(s.slices.at("aggregated") == 1);
  CHECK(s.notes.size() == 1);
}

TEST_CASE("a real threaded run: per-rank trace files merge into one with matched arrows") {
  const int P = 4;
  const auto dir =
      std::filesystem::temp_directory_path() / ("ringlab_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int r = 0; r < P; ++r)
    files.push_back((dir / ("rank" + std::to_string(r) + ".json")).string());
  std::size_t total_sends = 0;
  std::mutex mutex;
  run_world(P, [&](Transport& inner) {
    RecordOptions options;
    options.wall_clock = true;
    RecordingTransport t(inner, options);
    std::vector<float> data(64, static_cast<float>(t.rank()));
    const MutBytes bytes{reinterpret_cast<std::byte*>(data.data()), data.size() * sizeof(float)};
    t.name_buffer(bytes, "buf", DType::Float32, true);
    Comm comm(t, 0);
    all_reduce_ring(comm, {bytes.data(), data.size(), DType::Float32}, ReduceOp::SUM);
    std::ofstream out(files[static_cast<std::size_t>(t.rank())]);
    write_rank_trace(t.log(), out);
    std::size_t sends = 0;
    for (const auto& e : t.log().events) sends += e.kind == EventKind::PostSend;
    std::lock_guard lock(mutex);
    total_sends += sends;
  });
  for (const auto& f : files) {
    const Summary one = summarize(parse_file(f));  // each file loads on its own
    CHECK(one.lanes.size() == 1);
  }
  const std::string merged = (dir / "merged.json").string();
  merge_traces(files, merged);
  const Summary s = summarize(parse_file(merged));
  CHECK(s.lanes == std::set<int>{0, 1, 2, 3});
  CHECK(total_sends == 2u * 3u * 4u);
  CHECK(s.starts.size() == total_sends);
  CHECK(s.starts == s.ends);  // each send's arrow ends at its receive, across files
  std::filesystem::remove_all(dir);
}

namespace {

// A trace file of one lane written by TraceWriter, with one slice and a note.
void write_lane(const std::string& path, int rank, const std::string& lane_name,
                const std::string& process_name, const std::string& note) {
  std::ofstream out(path);
  TraceOptions options;
  options.process_name = process_name;
  TraceWriter w(out, options);
  w.lane(rank, lane_name);
  w.slice(rank, "send", "send", rank, 1);
  w.note(note);
}

std::vector<std::string> metadata_names(const json& trace, const std::string& what) {
  std::vector<std::string> names;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == what) names.push_back(e.at("args").at("name"));
  return names;
}

}  // namespace

TEST_CASE(
    "merge_traces: one process name, each lane's first name, every note; merging into "
    "one of its inputs adds to it") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ringlab_merge_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = [&](const std::string& name) { return (dir / name).string(); };
  write_lane(file("a.json"), 0, "rank 0", "first", "note a");
  write_lane(file("b.json"), 1, "rank 1", "second", "note b");
  write_lane(file("c.json"), 0, "rank 0 again", "third", "note c");
  const std::string merged = file("merged.json");
  CHECK(merge_traces({file("a.json"), file("b.json")}, merged) == 1 + 2 * 3);
  // Appending: the output is also the first input.
  CHECK(merge_traces({merged, file("c.json")}, merged) == 1 + 2 * 3 + 1);
  const json trace = parse_file(merged);
  CHECK(metadata_names(trace, "process_name") == std::vector<std::string>{"first"});
  CHECK(metadata_names(trace, "thread_name") == std::vector<std::string>{"rank 0", "rank 1"});
  const Summary s = summarize(trace);
  CHECK(s.slices.at("send") == 3);
  CHECK(s.notes == std::vector<std::string>{"note a", "note b", "note c"});
  // Nothing is left beside the output.
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    files += entry.is_regular_file();
  CHECK(files == 4);
  std::filesystem::remove_all(dir);
}

TEST_CASE("merge_traces names the input that is not a trace and leaves the output alone") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ringlab_merge_bad_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = [&](const std::string& name) { return (dir / name).string(); };
  write_lane(file("good.json"), 0, "rank 0", "ringlab", "");
  std::ofstream(file("cut.json")) << "{\"traceEvents\":[{\"ph\":\"X\"";
  std::ofstream(file("other.json")) << "{\"events\":[]}";
  std::ofstream(file("out.json")) << "before";
  for (const char* bad : {"cut.json", "other.json", "missing.json"}) {
    INFO(std::string(bad));
    try {
      merge_traces({file("good.json"), file(bad)}, file("out.json"));
      FAIL("merged a file that is not a trace");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find(file(bad)) != std::string::npos);
    }
    std::ifstream in(file("out.json"));
    CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "before");
  }
  std::filesystem::remove_all(dir);
}
