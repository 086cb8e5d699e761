// Chrome trace files: valid JSON, a lane per rank, matched flow arrows,
// bounded size; per-rank files of a real (threaded) run merge into one.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <variant>

#include "json_mini.hpp"
#include "simulator/recording_transport.hpp"
#include "simulator/trace.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;
using namespace ringlab::sim;

namespace {

using namespace json_mini;  // Json, parse, parse_file

struct Summary {
  std::set<int> lanes;                 // tids named by thread_name
  std::map<std::string, int> slices;   // per category
  std::multiset<double> starts, ends;  // flow ids
  std::vector<std::string> notes;
};
Summary summarize(const Json& trace) {
  Summary s;
  for (const Json& e : trace["traceEvents"].arr()) {
    const std::string ph = e["ph"].str();
    if (ph == "M" && e["name"].str() == "thread_name") s.lanes.insert(static_cast<int>(e["tid"].num()));
    if (ph == "X") ++s.slices[e["cat"].str()];
    if (ph == "s") s.starts.insert(e["id"].num());
    if (ph == "f") s.ends.insert(e["id"].num());
  }
  for (const Json& n : trace["otherData"]["notes"].arr()) s.notes.push_back(n.str());
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

TEST_CASE("the JSON parser used here rejects what is not JSON") {
  CHECK_THROWS(parse("{\"a\":1,}"));
  CHECK_THROWS(parse("[1 2]"));
  CHECK_THROWS(parse("{\"a\":1"));
  CHECK(parse("{\"a\":[1,\"x\",true,null]}")["a"].arr().size() == 4);
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
  const Json trace = parse(out.str());
  const Summary s = summarize(trace);
  CHECK(s.lanes.size() == 32);
  CHECK(s.slices.count("send") == 0);
  CHECK(s.slices.at("aggregated") > 0);
  CHECK(trace["traceEvents"].arr().size() < 500 + 2 * 32 + 10);
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
  const auto dir = std::filesystem::temp_directory_path() / ("ringlab_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int r = 0; r < P; ++r) files.push_back((dir / ("rank" + std::to_string(r) + ".json")).string());
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
