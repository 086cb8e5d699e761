// Chrome traces of real TCP runs: `ringlab run --trace`, `ringlab lesson
// --trace` and `ringlab bench --trace` (ranks as processes, tcp backend) write
// one merged file with a lane per rank, send/recv/reduce slices and flow
// arrows whose two ends, written by two different processes, pair up; the
// file has the same structure as `ringlab sim --trace` of the same
// collective, stays bounded, and is written when a rank fails too.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "file_test_support.hpp"
#include "run_program.hpp"

namespace {

using nlohmann::json;
using ringlab::testing::ProgramRun;
using ringlab::testing::run_shell;

// No launcher or trace variables from whoever runs the tests.
const std::string kClean = ringlab::testing::kCleanEnvironment +
                           "-u RINGLAB_TRACE_DIR -u RINGLAB_TRACE_MAX_EVENTS "
                           "-u RINGLAB_TRACE_ORIGIN_NS ";
const std::string kRinglab = RINGLAB_EXE;

using ringlab::testing::Folder;  // file_test_support.hpp: a mkdtemp folder per case

// Runs `arguments` (the words after `ringlab`) in the folder.
ProgramRun ringlab_in(const Folder& folder, const std::string& arguments) {
  return run_shell("cd " + folder.path.string() + " && " + kClean + kRinglab + " " + arguments);
}

struct Slice {
  int lane;
  std::string name, category, tag;
  double ts, dur;
};
struct FlowEnd {
  int lane;
  double ts;
};
struct Trace {
  std::set<int> lanes;  // named by thread_name
  std::vector<Slice> slices;
  std::map<std::uint64_t, std::vector<FlowEnd>> starts, ends;  // by flow id
  std::vector<std::string> notes;
  std::size_t events = 0;
  int count(const std::string& category) const {
    return static_cast<int>(std::count_if(slices.begin(), slices.end(),
                                          [&](const Slice& s) { return s.category == category; }));
  }
};

Trace load(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  const json trace = json::parse(in);
  Trace t;
  for (const json& e : trace.at("traceEvents")) {
    ++t.events;
    const std::string ph = e.at("ph");
    const int lane = e.contains("tid") ? e.at("tid").get<int>() : -1;
    if (ph == "M" && e.at("name") == "thread_name") t.lanes.insert(lane);
    if (ph == "X") {
      const std::string tag = e.contains("args") ? e.at("args").value("tag", "") : "";
      t.slices.push_back({lane, e.at("name"), e.at("cat"), tag, e.at("ts"), e.at("dur")});
    }
    if (ph == "s") t.starts[e.at("id").get<std::uint64_t>()].push_back({lane, e.at("ts")});
    if (ph == "f") t.ends[e.at("id").get<std::uint64_t>()].push_back({lane, e.at("ts")});
  }
  for (const json& n : trace.at("otherData").at("notes")) t.notes.push_back(n);
  return t;
}

// Timestamps are printed in microseconds with 3 decimals.
constexpr double kRounding = 0.002;

bool inside(const Slice& s, double ts) {
  return ts >= s.ts - kRounding && ts <= s.ts + s.dur + kRounding;
}

// Every arrow: one start and one end with the same id; it starts inside a
// "send to D" slice on lane S and ends inside a "recv from S" slice on lane
// D != S; and the receive ends after the send began (the processes share one
// steady clock, so this holds across lanes).
void check_arrows(const Trace& t) {
  REQUIRE(!t.starts.empty());
  CHECK(t.starts.size() == t.ends.size());
  for (const auto& [id, starts] : t.starts) {
    INFO("flow id " << id);
    REQUIRE(starts.size() == 1);
    const auto end_it = t.ends.find(id);
    REQUIRE(end_it != t.ends.end());
    REQUIRE(end_it->second.size() == 1);
    const FlowEnd from = starts.front(), to = end_it->second.front();
    CHECK(from.lane != to.lane);
    CHECK(to.ts + kRounding >= from.ts);
    const auto on = [&](int lane, const std::string& name, double ts) {
      return std::any_of(t.slices.begin(), t.slices.end(), [&](const Slice& s) {
        return s.lane == lane && s.name == name && inside(s, ts);
      });
    };
    CHECK(on(from.lane, "send to " + std::to_string(to.lane), from.ts));
    CHECK(on(to.lane, "recv from " + std::to_string(from.lane), to.ts));
  }
}

// "collective #3 step 1" -> {3, "step 1"}; {-1, ""} for other tags.
std::pair<int, std::string> split_tag(const std::string& tag) {
  const std::string prefix = "collective #";
  const auto space = tag.find(' ', prefix.size());
  if (tag.rfind(prefix, 0) != 0 || space == std::string::npos) return {-1, ""};
  return {std::stoi(tag.substr(prefix.size(), space - prefix.size())), tag.substr(space + 1)};
}

// The messages of the last collective in the trace, as (lane, slice name,
// step): what a simulated and a measured run of that collective share.
std::multiset<std::tuple<int, std::string, std::string>> last_collective(const Trace& t) {
  int last = -1;
  for (const Slice& s : t.slices) last = std::max(last, split_tag(s.tag).first);
  std::multiset<std::tuple<int, std::string, std::string>> messages;
  for (const Slice& s : t.slices)
    if (const auto [collective, step] = split_tag(s.tag); collective == last && last >= 0)
      messages.emplace(s.lane, s.name, step);
  return messages;
}

// The ring all_reduce on 3 ranks, worked out by hand: 2 (P - 1) = 4 steps,
// in each rank r sends to r + 1 and receives from r - 1 (mod 3).
std::multiset<std::tuple<int, std::string, std::string>> ring_all_reduce_of_3() {
  std::multiset<std::tuple<int, std::string, std::string>> messages;
  for (int r = 0; r < 3; ++r)
    for (int step = 0; step < 4; ++step) {
      messages.emplace(r, "send to " + std::to_string((r + 1) % 3), "step " + std::to_string(step));
      messages.emplace(r, "recv from " + std::to_string((r + 2) % 3),
                       "step " + std::to_string(step));
    }
  return messages;
}

// Slice names without what follows the first space of a local operation
// ("reduce buf" -> "reduce"): the set of (lane, name) in a trace.
std::set<std::pair<int, std::string>> lane_names(const Trace& t) {
  std::set<std::pair<int, std::string>> names;
  for (const Slice& s : t.slices)
    names.emplace(s.lane, s.category == "send" || s.category == "recv"
                              ? s.name
                              : s.name.substr(0, s.name.find(' ')));
  return names;
}

}  // namespace

TEST_CASE(
    "ringlab run --trace: 3 lanes, send/recv slices, arrows paired across processes, "
    "the same structure as ringlab sim --trace") {
  const Folder folder;
  const ProgramRun run = ringlab_in(folder, "run --nproc-per-node 3 --trace T.json -- " + kRinglab +
                                                " lesson all_reduce -n 3 --timeout-ms 20000");
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("after reudce  Rank  0  has data  tensor([ 9, 12])") != std::string::npos);
  CHECK(run.output.find("written to T.json") != std::string::npos);
  const Trace real = load((folder / "T.json"));
  CHECK(real.lanes == std::set<int>{0, 1, 2});
  for (int lane = 0; lane < 3; ++lane) {
    INFO("lane " << lane);
    CHECK(std::any_of(real.slices.begin(), real.slices.end(),
                      [&](const Slice& s) { return s.lane == lane && s.category == "send"; }));
    CHECK(std::any_of(real.slices.begin(), real.slices.end(),
                      [&](const Slice& s) { return s.lane == lane && s.category == "recv"; }));
  }
  CHECK(real.count("reduce") > 0);
  check_arrows(real);
  // The lesson's all_reduce (the last collective; the argument check before
  // it is one too) is the ring worked out by hand.
  CHECK(last_collective(real) == ring_all_reduce_of_3());

  const ProgramRun sim = ringlab_in(folder, "sim all_reduce --ranks 3 --count 6 --trace S.json");
  REQUIRE(sim.status == 0);
  const Trace simulated = load((folder / "S.json"));
  CHECK(simulated.lanes == real.lanes);
  CHECK(last_collective(simulated) == last_collective(real));
  // The same (lane, event name) pairs: the real run's argument check adds
  // messages, but along the same ring.
  CHECK(lane_names(real) == lane_names(simulated));
}

TEST_CASE(
    "ringlab lesson --trace and ringlab bench --trace: the tcp backend starts the ranks and "
    "merges their traces; the inproc backend's threads are traced too") {
  const Folder folder;
  {
    const ProgramRun run =
        ringlab_in(folder, "lesson all_reduce -n 3 --trace L.json --timeout-ms 20000");
    INFO(run.output);
    REQUIRE(run.status == 0);
    CHECK(run.output.find("after reudce  Rank  2  has data  tensor([ 9, 12])") !=
          std::string::npos);
    const Trace t = load((folder / "L.json"));
    CHECK(t.lanes == std::set<int>{0, 1, 2});
    check_arrows(t);
    CHECK(last_collective(t) == ring_all_reduce_of_3());
  }
  {
    const ProgramRun run = ringlab_in(
        folder, "bench --op all_reduce -n 4 --sizes 4K:8K --warmup 1 --iters 2 --trace B.json");
    INFO(run.output);
    REQUIRE(run.status == 0);
    const Trace t = load((folder / "B.json"));
    CHECK(t.lanes == std::set<int>{0, 1, 2, 3});
    check_arrows(t);
  }
  {
    // The inproc backend's ranks are threads: traced all the same, a lane each.
    const ProgramRun run =
        ringlab_in(folder, "lesson all_reduce -n 3 --backend inproc --trace X.json");
    INFO(run.output);
    REQUIRE(run.status == 0);
    const Trace t = load((folder / "X.json"));
    CHECK(t.lanes == std::set<int>{0, 1, 2});
    check_arrows(t);
    CHECK(last_collective(t) == ring_all_reduce_of_3());
  }
}

TEST_CASE("a traced run stays bounded: past --trace-limit the ranks aggregate") {
  const Folder folder;
  const std::string bench =
      " -- " + kRinglab + " bench --op all_reduce -n 3 --sizes 4K:64K --warmup 1 --iters 3";
  const ProgramRun full = ringlab_in(folder, "run --nproc-per-node 3 --trace full.json" + bench);
  INFO(full.output);
  REQUIRE(full.status == 0);
  const Trace unlimited = load((folder / "full.json"));
  const std::size_t limit = 60;           // 20 single events per rank
  REQUIRE(unlimited.events > 2 * limit);  // otherwise the limit below proves nothing
  CHECK(unlimited.count("aggregated") == 0);

  const ProgramRun run =
      ringlab_in(folder, "run --nproc-per-node 3 --trace-limit " + std::to_string(limit) +
                             " --trace small.json" + bench);
  INFO(run.output);
  REQUIRE(run.status == 0);
  const Trace small = load((folder / "small.json"));
  CHECK(small.lanes == std::set<int>{0, 1, 2});
  // Per rank: 20 events, 1 aggregated slice, 2 lane metadata; plus the process name.
  CHECK(small.events <= 3 * (limit / 3 + 1 + 2) + 1);
  CHECK(small.count("aggregated") == 3);
  CHECK(std::any_of(small.notes.begin(), small.notes.end(), [](const std::string& n) {
    return n.find("event limit") != std::string::npos;
  }));
}

TEST_CASE("a failed run still leaves the ranks' traces; a program that records none is told so") {
  const Folder folder;
  {
    // Rank 2 asks for a different root: every rank fails the argument check.
    const ProgramRun run = ringlab_in(
        folder,
        "run --nproc-per-node 3 --trace F.json -- sh -c '[ \"$RANK\" = 2 ] && root=1 || root=0; "
        "exec " +
            kRinglab + " lesson reduce -n 3 --root $root --timeout-ms 10000'");
    INFO(run.output);
    CHECK(run.status != 0);
    REQUIRE(std::filesystem::exists((folder / "F.json")));
    const Trace t = load((folder / "F.json"));
    CHECK(t.lanes == std::set<int>{0, 1, 2});
    CHECK(t.count("send") > 0);
  }
  {
    const ProgramRun run = ringlab_in(folder, "run --nproc-per-node 2 --trace N.json -- true");
    INFO(run.output);
    CHECK(run.status == 0);
    CHECK(run.output.find("no rank wrote a trace") != std::string::npos);
    CHECK(!std::filesystem::exists((folder / "N.json")));
  }
}

TEST_CASE(
    "ringlab tour --trace: every world's ranks (fresh processes each) land in one file "
    "whose arrows still pair up") {
  const Folder folder;
  const ProgramRun lesson = ringlab_in(folder, "lesson all_reduce -n 3 --trace one.json");
  REQUIRE(lesson.status == 0);
  const ProgramRun run = ringlab_in(folder, "tour --trace tour.json --timeout-ms 20000");
  INFO(run.output);
  REQUIRE(run.status == 0);
  const Trace tour = load((folder / "tour.json"));
  CHECK(tour.lanes == std::set<int>{0, 1, 2, 3});  // the biggest lesson world is 4
  // Every world counts its messages from 0, on the same few channels: without
  // a series per world their arrow ids would repeat (check_arrows requires one
  // start and one end per id).
  check_arrows(tour);
  CHECK(tour.starts.size() > 2 * load((folder / "one.json")).starts.size());
}
