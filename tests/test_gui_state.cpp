// The GUI's state without a window: commands move the cursor and change the
// settings; what each rank panel would print is checked against the articles'
// printouts, closed forms, and the simulator's own buffers. Also what the side
// panel offers: the controls a primitive has, the cost lines, the bytes sent
// so far.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "gui/frame.hpp"
#include "gui/side_panel.hpp"
#include "gui/state.hpp"
#include "gui/training_walk.hpp"
#include "simulator/param_server.hpp"
#include "simulator/record.hpp"

using namespace ringlab;
using namespace ringlab::gui;

namespace {

std::vector<std::string> panel_lines(const GuiState& state) {
  std::vector<std::string> lines;
  for (const RankPanel& panel : build_frame(state).ranks) lines.push_back(panel.line);
  return lines;
}

// "tensor([a, b, ...])" for integers, built by hand (the articles' format).
std::string int_tensor(const std::vector<long long>& values) {
  std::string text = "tensor([";
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "])";
}

// Every panel's primary line, at every frame, equals the simulator's buffer
// for that rank after that step (so the cursor maps to the right step).
void check_panels_match_simulator(GuiState state) {
  for (int frame = 0; frame < frame_count(state); ++frame) {
    apply(state, JumpTo{frame});
    const FrameRef ref = current_frame(state);
    const sim::Run& run = state.recording.acts[ref.act].run;
    sim::Replay replay(run);
    if (ref.step > 0) replay.seek(ref.step);
    const FrameView view = build_frame(state);
    REQUIRE(view.ranks.size() == static_cast<std::size_t>(run.ranks));
    for (const RankPanel& panel : view.ranks) {
      if (panel.buffers.empty()) {  // a barrier moves no data
        CHECK(run.operation == "barrier");
        continue;
      }
      const BufferView& primary = panel.buffers.front();
      CHECK(primary.primary);
      const int region = run.buffer_of(panel.rank, primary.name);
      REQUIRE(region >= 0);
      const Tensor tensor = replay.tensor(region);
      CAPTURE(frame);
      CAPTURE(panel.rank);
      REQUIRE(primary.cells.size() == tensor.numel());
      // Cell i's provenance is the simulator's for that element.
      for (std::size_t i = 0; i < tensor.numel(); ++i)
        CHECK(primary.cells[i].provenance == replay.provenance_at(region, i));
      if (primary.printed.front() == 't') CHECK(primary.printed == tensor.to_string());
    }
  }
}

// A training step's frames: every rank shows its parameters and every
// bucket; while a bucket's all_reduce runs, its cells carry the simulator's
// provenance for the record's step under the cursor.
void check_training_frames(GuiState state) {
  const Act& act = state.recording.acts.front();
  REQUIRE(act.training);
  const TrainingWalk& walk = *act.training;
  REQUIRE(frame_count(state) == static_cast<int>(walk.ticks.size()));
  for (int frame = 0; frame < frame_count(state); ++frame) {
    apply(state, JumpTo{frame});
    const TrainingTick& tick = walk.ticks[static_cast<std::size_t>(frame)];
    sim::Replay replay(act.run);
    if (tick.shown_step >= 0) replay.seek(static_cast<sim::Step>(tick.shown_step));
    const FrameView view = build_frame(state);
    REQUIRE(view.ranks.size() == static_cast<std::size_t>(act.run.ranks));
    for (const RankPanel& panel : view.ranks) {
      CAPTURE(frame);
      CAPTURE(panel.rank);
      REQUIRE(panel.buffers.size() >= 1 + walk.step.buckets.size());
      CHECK(panel.buffers[0].name == "parameters");
      for (std::size_t b = 0; b < walk.step.buckets.size(); ++b) {
        const BufferView& bucket = panel.buffers[1 + b];
        const int region = act.run.buffer_of(panel.rank, bucket.name);
        REQUIRE(region >= 0);
        REQUIRE(bucket.cells.size() == walk.step.buckets[b].numel);
        const bool running = tick.shown_step >= static_cast<long long>(walk.first_step[b]) &&
                             frame < walk.divide_tick;
        if (!running) continue;
        for (std::size_t i = 0; i < bucket.cells.size(); ++i)
          CHECK(bucket.cells[i].provenance == replay.provenance_at(region, i));
      }
    }
  }
}

}  // namespace

TEST_CASE("reduce on 4 ranks: the article's before and after lines, partial sums included") {
  GuiState state = make_state("reduce");
  CHECK(state.settings.ranks == 4);
  CHECK(effective_root(state.settings) == 3);
  CHECK(panel_lines(state) == std::vector<std::string>{
                                  "Rank 0 has data tensor([1, 2])", "Rank 1 has data tensor([3, 4])",
                                  "Rank 2 has data tensor([5, 6])", "Rank 3 has data tensor([7, 8])"});
  apply(state, JumpToEnd{});
  // The article's printout after dist.reduce(tensor, dst=3).
  CHECK(panel_lines(state) == std::vector<std::string>{"Rank 0 has data tensor([16, 20])",
                                                       "Rank 1 has data tensor([15, 18])",
                                                       "Rank 2 has data tensor([12, 14])",
                                                       "Rank 3 has data tensor([16, 20])"});
  check_panels_match_simulator(state);
}

TEST_CASE("the dtype control: reduce in float16 prints as torch prints float16; avg on int8 is refused") {
  GuiState state = make_state("reduce");
  apply(state, SetDType{DType::Float16});
  CHECK(collective_dtype(state.settings) == DType::Float16);
  apply(state, JumpToEnd{});
  CHECK(panel_lines(state) ==
        std::vector<std::string>{"Rank 0 has data tensor([16., 20.], dtype=torch.float16)",
                                 "Rank 1 has data tensor([15., 18.], dtype=torch.float16)",
                                 "Rank 2 has data tensor([12., 14.], dtype=torch.float16)",
                                 "Rank 3 has data tensor([16., 20.], dtype=torch.float16)"});
  check_panels_match_simulator(state);
  apply(state, SetDType{DType::Int8});
  apply(state, SetOp{ReduceOp::AVG});
  CHECK(state.error.find("avg does not apply to dtype int8") != std::string::npos);
}

TEST_CASE("ring all-reduce: reduce-scatter for P-1 steps, then all-gather for P-1 steps") {
  GuiState state = make_state("ring_allreduce");
  const int p = 4;
  REQUIRE(state.settings.elements == p);  // one element per chunk
  CHECK(frame_count(state) == 1 + 2 * (p - 1));
  // Rank r holds [1+2r+i]; the sum over ranks of element i is p(1+i) + p(p-1).
  auto sum_of = [](int ranks, int i) { return ranks * (1 + i) + ranks * (ranks - 1); };
  for (int step = 1; step <= 2 * (p - 1); ++step) {
    apply(state, JumpTo{step});
    const std::string expected_phase = step <= p - 1 ? ", reduce-scatter: " : ", all-gather: ";
    const std::string sentence = build_frame(state).sentence;
    CAPTURE(sentence);
    CHECK(sentence.rfind("step " + std::to_string(step) + " of 6" + expected_phase, 0) == 0);
    CHECK(build_frame(state).arrows.size() == static_cast<std::size_t>(p));
  }
  // After the reduce-scatter phase each rank owns exactly one complete chunk,
  // holding the full sum; the chunks of the ranks are all different.
  apply(state, JumpTo{p - 1});
  std::vector<int> owned;
  for (const RankPanel& panel : build_frame(state).ranks) {
    int complete = 0;
    for (std::size_t i = 0; i < panel.buffers.front().cells.size(); ++i) {
      const CellView& cell = panel.buffers.front().cells[i];
      if (cell.provenance.count() != static_cast<std::size_t>(p)) continue;
      ++complete;
      owned.push_back(static_cast<int>(i));
      CHECK(cell.text == std::to_string(sum_of(p, static_cast<int>(i))));
    }
    CHECK(complete == 1);
  }
  std::sort(owned.begin(), owned.end());
  CHECK(owned == std::vector<int>{0, 1, 2, 3});
  apply(state, JumpToEnd{});
  for (const std::string& line : panel_lines(state))
    CHECK(line.substr(line.find("tensor")) == int_tensor({16, 20, 24, 28}));
  check_panels_match_simulator(state);

  SUBCASE("stepping back and forth, and clamping at both ends") {
    apply(state, JumpToStart{});
    CHECK(state.cursor == 0);
    apply(state, StepBack{});
    CHECK(state.cursor == 0);
    apply(state, StepForward{});
    apply(state, StepForward{});
    CHECK(state.cursor == 2);
    apply(state, StepBack{});
    CHECK(state.cursor == 1);
    apply(state, JumpTo{100});
    CHECK(state.cursor == 2 * (p - 1));
    apply(state, StepForward{});
    CHECK(state.cursor == 2 * (p - 1));
  }

  SUBCASE("a new world size re-records and keeps the cursor where it can") {
    apply(state, JumpTo{3});
    apply(state, SetRanks{6});
    CHECK(state.error.empty());
    CHECK(state.settings.ranks == 6);
    CHECK(frame_count(state) == 1 + 2 * 5);
    CHECK(state.cursor == 3);
    apply(state, JumpToEnd{});
    // 4 elements on 6 ranks: sum over q < 6 of (1 + 2q + i).
    for (const std::string& line : panel_lines(state))
      CHECK(line.substr(line.find("tensor")) ==
            int_tensor({sum_of(6, 0), sum_of(6, 1), sum_of(6, 2), sum_of(6, 3)}));
    apply(state, SetRanks{2});
    CHECK(state.cursor == 2);  // clamped: 2 ranks take 2 steps
    check_panels_match_simulator(state);
  }

  SUBCASE("settings that cannot run are refused and leave the run alone") {
    apply(state, SetRanks{17});
    CHECK_FALSE(state.error.empty());
    CHECK(state.settings.ranks == p);
    CHECK(frame_count(state) == 1 + 2 * (p - 1));
    apply(state, StepForward{});
    CHECK(state.error.empty());
    apply(state, SetElements{0});
    CHECK_FALSE(state.error.empty());
  }

  SUBCASE("play advances one step per period and stops at the end") {
    apply(state, JumpToStart{});
    apply(state, SetSpeed{2.0f});
    apply(state, TogglePlay{});
    CHECK(state.playing);
    apply(state, Tick{0.4f});
    CHECK(state.cursor == 0);
    apply(state, Tick{0.2f});
    CHECK(state.cursor == 1);
    apply(state, Tick{10.0f});
    CHECK(state.cursor == 2 * (p - 1));
    CHECK_FALSE(state.playing);
    apply(state, Tick{1.0f});
    CHECK(state.cursor == 2 * (p - 1));
  }
}

TEST_CASE("scatter then gather: the articles' scatter_list blocks, then the gather_list") {
  GuiState state = make_state("scatter_gather");
  REQUIRE(state.recording.acts.size() == 2);
  // The last frame of the scatter act: rank r received tensor([r, r]).
  int scatter_end = 0;
  while (state.recording.frames[scatter_end + 1].act == 0) ++scatter_end;
  apply(state, JumpTo{scatter_end});
  CHECK(panel_lines(state) == std::vector<std::string>{
                                  "Rank 0 has data tensor([0, 0])", "Rank 1 has data tensor([1, 1])",
                                  "Rank 2 has data tensor([2, 2])", "Rank 3 has data tensor([3, 3])"});
  apply(state, StepForward{});  // the gather's "before" frame
  CHECK(current_frame(state) == FrameRef{1, 0});
  CHECK(panel_lines(state) == std::vector<std::string>{
                                  "Rank 0 has data tensor([1, 2])", "Rank 1 has data tensor([3, 4])",
                                  "Rank 2 has data tensor([5, 6])", "Rank 3 has data tensor([7, 8])"});
  apply(state, JumpToEnd{});
  // dst 0's gather_list, as the article prints it.
  const RankPanel root = build_frame(state).ranks[0];
  bool found = false;
  for (const BufferView& buffer : root.buffers)
    found = found ||
            buffer.printed == "[tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]";
  CHECK(found);
  check_panels_match_simulator(state);
}

TEST_CASE("parameter server: only pushed keys change, by -lr times their gradients") {
  GuiState state = make_state("parameter_server");
  REQUIRE(state.recording.acts.size() == 1);
  const sim::Run& run = state.recording.acts[0].run;
  CHECK(run.operation == "parameter_server");
  apply(state, JumpToEnd{});
  const FrameView view = build_frame(state);
  // The plan (which keys each worker pushes, with which gradient) is decided
  // up front; the expected parameters follow from it by hand: 100 + k minus
  // lr times every gradient pushed for k.
  sim::PsScenario ps;
  ps.servers = 2;
  ps.workers = 3;
  ps.keys = 16;
  ps.push_per_worker = 4;
  ps.pull_per_worker = 4;
  const sim::PsPlan plan = sim::plan_parameter_server(ps);
  std::vector<double> expected(ps.keys);
  for (std::size_t k = 0; k < ps.keys; ++k) expected[k] = 100.0 + static_cast<double>(k);
  for (int w = 0; w < ps.workers; ++w)
    for (std::size_t j = 0; j < plan.push_keys[0][w].size(); ++j)
      expected[plan.push_keys[0][w][j]] -= ps.learning_rate * plan.gradients[0][w][j];
  int untouched = 0;
  for (int s = 0; s < ps.servers; ++s) {
    const RankPanel& server = view.ranks[s];
    CHECK(server.role == "server " + std::to_string(s));
    const BufferView& params = server.buffers.front();
    CHECK(params.name == "params");
    const Chunk keys = plan.key_ranges[s];
    REQUIRE(params.cells.size() == keys.count);
    for (std::size_t i = 0; i < keys.count; ++i) {
      char text[32];
      std::snprintf(text, sizeof text, "%.4g", expected[keys.offset + i]);
      CHECK(params.cells[i].text == text);
      if (expected[keys.offset + i] == 100.0 + static_cast<double>(keys.offset + i)) ++untouched;
    }
  }
  CHECK(untouched > 0);  // partial updates: some keys nobody pushed
  check_panels_match_simulator(state);
}

TEST_CASE("every primitive and algorithm records and steps through") {
  for (const std::string& primitive : primitive_names()) {
    GuiState state = make_state(primitive_defaults(primitive));
    for (const std::string& algorithm : algorithm_names(primitive)) {
      CAPTURE(primitive);
      CAPTURE(algorithm);
      apply(state, SetAlgorithm{algorithm});
      CHECK(state.error.empty());
      CHECK(frame_count(state) >= 1);
      if (is_training_step(primitive))
        check_training_frames(state);
      else
        check_panels_match_simulator(state);
    }
  }
}

TEST_CASE("a refused setting stays on screen until the learner's next command") {
  GuiState state = make_state("ring_allreduce");
  apply(state, SetRanks{kMaxRanks + 1});
  REQUIRE_FALSE(state.error.empty());
  // Every frame applies the time that passed and the log's scrolling: they
  // must not wipe the message before anyone can read it.
  apply(state, Tick{0.5f});
  apply(state, LogScrolled{state.cursor});
  CHECK_FALSE(state.error.empty());
  apply(state, StepForward{});
  CHECK(state.error.empty());
}

TEST_CASE("the step log follows the cursor once per move") {
  GuiState state = make_state("ring_allreduce");
  CHECK(state.log_scrolled_to != state.cursor);  // a new window scrolls to the cursor
  apply(state, LogScrolled{state.cursor});
  CHECK(state.log_scrolled_to == state.cursor);
  apply(state, StepForward{});
  CHECK(state.log_scrolled_to != state.cursor);  // moved: the log scrolls again
}

TEST_CASE("all_to_all's inputs are the lesson's 10r + j: the outputs are their transpose") {
  // Issue 25: the inputs were 1 + 2r + i, so values overlapped between ranks
  // ([1, 2], [3, 4], ...) and the transpose could not be seen. The lesson
  // (lessons/all_to_all.cpp) gives entry j of rank r the value 10r + j; past
  // ten ranks the GUI uses 100r + j so that a value still reads as (r, j).
  for (const auto& [ranks, base] : {std::pair{4, 10LL}, std::pair{12, 100LL}}) {
    CAPTURE(ranks);
    Settings settings = primitive_defaults("all_to_all");
    settings.ranks = ranks;
    settings.elements = 2;
    GuiState state = make_state(settings);
    auto blocks_of = [&](const BufferView& buffer) {
      std::vector<std::vector<std::string>> blocks(static_cast<std::size_t>(ranks));
      for (std::size_t i = 0; i < buffer.cells.size(); ++i)
        blocks[i / 2].push_back(buffer.cells[i].text);
      return blocks;
    };
    const FrameView before = build_frame(state);
    for (const RankPanel& panel : before.ranks) {
      REQUIRE(panel.buffers.size() >= 1);
      const auto blocks = blocks_of(panel.buffers.front());  // the input list
      for (int j = 0; j < ranks; ++j)
        CHECK(blocks[static_cast<std::size_t>(j)] ==
              std::vector<std::string>(2, std::to_string(base * panel.rank + j)));
    }
    if (ranks == 4)
      CHECK(before.ranks[2].line ==
            "Rank 2 has data [tensor([20, 20]), tensor([21, 21]), tensor([22, 22]), "
            "tensor([23, 23])]");
    apply(state, JumpToEnd{});
    for (const RankPanel& panel : build_frame(state).ranks) {
      const auto recv = std::find_if(panel.buffers.begin(), panel.buffers.end(),
                                     [](const BufferView& b) { return b.name == "recv"; });
      REQUIRE(recv != panel.buffers.end());
      const auto blocks = blocks_of(*recv);
      // Block j came from rank j, which sent its entry for this rank.
      for (int j = 0; j < ranks; ++j)
        CHECK(blocks[static_cast<std::size_t>(j)] ==
              std::vector<std::string>(2, std::to_string(base * j + panel.rank)));
    }
  }
}

TEST_CASE("the side panel offers the controls a primitive has: a barrier has no size") {
  // Issue 25: the barrier showed "size 16 B" and an elements control.
  const Controls barrier = controls_for(primitive_defaults("barrier"));
  CHECK(barrier.size_label.empty());
  CHECK_FALSE(barrier.op);
  CHECK_FALSE(barrier.root);
  CHECK(controls_for(primitive_defaults("all_reduce")).size_label == "elements");
  CHECK(controls_for(primitive_defaults("all_reduce")).op);
  CHECK(controls_for(primitive_defaults("reduce")).root);
  CHECK(controls_for(primitive_defaults("scatter_gather")).root);
  CHECK(controls_for(primitive_defaults("parameter_server")).size_label == "keys/server");
  CHECK(controls_for(primitive_defaults("ddp_step")).size_label == "bucket cap");
  CHECK(controls_for(primitive_defaults("horovod_step")).size_label == "threshold");
  // The cost block: no size and no bandwidths for the barrier, both for a
  // collective that moves data.
  GuiState state = make_state("barrier");
  apply(state, JumpTo{1});
  const FrameView view = build_frame(state);
  CHECK_FALSE(view.cost.carries_data);
  for (const std::string& line : cost_lines(view)) {
    CAPTURE(line);
    CHECK(line.find("size ") == std::string::npos);
    const bool bandwidth = line.find("GB/s") != std::string::npos;
    const bool model = line.find("links") != std::string::npos;  // the model's constants
    CHECK((!bandwidth || model));
  }
  GuiState reduce = make_state("all_reduce");
  apply(reduce, JumpTo{1});
  bool bandwidth = false;
  for (const std::string& line : cost_lines(build_frame(reduce)))
    bandwidth = bandwidth || line.rfind("size 16 B   algbw", 0) == 0;
  CHECK(bandwidth);  // 2 int64 elements
}

TEST_CASE("bytes sent: this step, so far and the whole run, per rank") {
  // Issue 25: "bytes sent ... in total" was the whole run's, not the total so
  // far. The ring all-reduce on p ranks of p elements sends one 8-byte
  // element per rank per step, 2(p - 1) steps.
  for (int p : {3, 4, 6}) {
    CAPTURE(p);
    GuiState state = make_state("ring_allreduce", p);
    const std::size_t all = 2 * static_cast<std::size_t>(p - 1) * 8;
    for (int frame = 0; frame < frame_count(state); ++frame) {
      apply(state, JumpTo{frame});
      const CostView cost = build_frame(state).cost;
      CAPTURE(frame);
      REQUIRE(cost.bytes_sent_so_far.size() == static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        CHECK(cost.step_bytes_sent[ur] == (frame > 0 ? 8u : 0u));
        CHECK(cost.bytes_sent_so_far[ur] == static_cast<std::size_t>(frame) * 8);
        CHECK(cost.total_bytes_sent[ur] == all);
      }
    }
  }
  CHECK(std::string(kBytesColumns[2]) == "so far");
  CHECK(std::string(kBytesColumns[3]) == "in all");
}

TEST_CASE("a new recording gets a new revision; moving the cursor keeps it") {
  // The window keeps the frame and its layout until the revision or the
  // cursor changes (gui/draw.hpp's FrameCache).
  GuiState state = make_state("all_reduce");
  const int first = state.revision;
  apply(state, StepForward{});
  apply(state, Tick{0.5f});
  CHECK(state.revision == first);
  apply(state, SetRanks{5});
  CHECK(state.revision == first + 1);
  apply(state, SetRanks{kMaxRanks + 1});  // refused: the recording stays
  CHECK(state.revision == first + 1);
}

TEST_CASE("picking a rank: a plain field that SelectRank sets, kept while the world has it") {
  GuiState state = make_state("ddp_step", 16);
  CHECK(state.selected_rank == -1);  // follows the step
  apply(state, SelectRank{5});
  CHECK(state.selected_rank == 5);
  CHECK(state.error.empty());
  apply(state, StepForward{});  // moving keeps the pick
  CHECK(state.selected_rank == 5);
  apply(state, SelectRank{16});  // not a rank of 16: refused, said why
  CHECK(state.selected_rank == 5);
  CHECK(state.error.find("rank 16 is not a rank") != std::string::npos);
  CHECK(state.error.find("pick 0 to 15") != std::string::npos);
  apply(state, SelectRank{-2});
  CHECK(state.selected_rank == 5);
  CHECK_FALSE(state.error.empty());
  apply(state, SetRanks{8});  // 5 is still a rank
  CHECK(state.selected_rank == 5);
  apply(state, SetRanks{4});  // it is not: follow the step again
  CHECK(state.selected_rank == -1);
  apply(state, SelectRank{3});
  apply(state, SelectRank{-1});
  CHECK(state.selected_rank == -1);
}

namespace {

// The rank a sentence says receives what it names: "rank 3 sends chunk 0 to
// rank 4, which ..." or "rank 0 sends rank 1 an empty chunk".
int receiver_in(const std::string& sentence) {
  std::smatch match;
  if (std::regex_search(sentence, match, std::regex(R"(rank \d+ sends .*? to rank (\d+))")) ||
      std::regex_search(sentence, match, std::regex(R"(rank \d+ sends rank (\d+) an empty)")))
    return std::stoi(match[1].str());
  return -1;
}

}  // namespace

TEST_CASE("a frame follows the rank its sentence names as the receiver") {
  for (const auto& [scenario, ranks] : {std::pair<std::string, int>{"ring_allreduce", 4},
                                        {"all_reduce", 16},
                                        {"all_to_all", 16},
                                        {"reduce", 8},
                                        {"ddp_step", 16}}) {
    GuiState state = make_state(scenario, ranks);
    int last = -1;  // a training step's last message step
    for (int frame = 0; frame < frame_count(state); ++frame) {
      apply(state, JumpTo{frame});
      const FrameView view = build_frame(state);
      CAPTURE(scenario);
      CAPTURE(frame);
      CAPTURE(view.sentence);
      const int named = receiver_in(view.sentence);
      if (named >= 0) last = named;
      if (view.arrows.empty())
        // Between message steps a training tick keeps the last one's rank;
        // before any message, none.
        CHECK(view.subject == (view.training ? last : -1));
      else
        CHECK(view.subject == named);
    }
  }
}

TEST_CASE("whether every message of an act goes between ring neighbours") {
  auto neighbours = [](const std::string& scenario, int ranks, const std::string& algorithm) {
    Settings settings = scenario_settings(scenario, ranks);
    if (!algorithm.empty()) settings.algorithm = algorithm;
    return build_frame(make_state(settings)).neighbours_only;
  };
  CHECK(neighbours("ring_allreduce", 16, ""));
  CHECK(neighbours("ddp_step", 16, "ring"));
  CHECK(neighbours("reduce_scatter", 8, "ring"));
  CHECK_FALSE(neighbours("all_to_all", 16, ""));    // rank r to r + k
  CHECK_FALSE(neighbours("broadcast", 8, "flat"));  // the root to every rank
  CHECK_FALSE(neighbours("parameter_server", 8, ""));
  CHECK(neighbours("all_to_all", 2, ""));  // two ranks are always neighbours
}

// A real run that failed (gui --trace): a message whose receive never
// completed, and a receive no message matched. Simulated runs have neither:
// every arrow of every frame of a scenario arrived.
TEST_CASE("a failed run's message that never arrived, and a receive that waited in vain") {
  GuiState state = make_state("ring_allreduce", 3);
  for (int frame = 0; frame < frame_count(state); ++frame) {
    apply(state, JumpTo{frame});
    for (const ArrowView& arrow : build_frame(state).arrows) CHECK_FALSE(arrow.lost);
  }
  sim::Run& run = state.recording.acts.at(0).run;
  // Step 2: rank 0's message to rank 1 never arrives, and rank 2 waits for
  // 24 bytes from rank 1 that never come.
  const auto lost = std::find_if(run.messages.begin(), run.messages.end(),
                                 [](const sim::Message& m) { return m.step == 2 && m.src == 0; });
  REQUIRE(lost != run.messages.end());
  lost->delivered = false;
  sim::Awaited awaited;
  awaited.src = 1;
  awaited.dst = 2;
  awaited.step = 2;
  awaited.bytes = 24;
  run.awaited.push_back(awaited);
  apply(state, JumpTo{2});
  const FrameView view = build_frame(state);
  int lost_arrows = 0;
  for (const ArrowView& arrow : view.arrows) {
    CAPTURE(arrow.label);
    const bool named = arrow.label.find(", never arrived") != std::string::npos;
    CHECK(named == arrow.lost);
    if (arrow.lost) {
      ++lost_arrows;
      CHECK(arrow.src == 0);
      CHECK(arrow.dst == 1);
      CHECK(arrow.range.find(", never arrived") != std::string::npos);
    }
  }
  CHECK(lost_arrows == 1);
  const auto says = [&](const std::string& words) {
    return std::any_of(view.message_lines.begin(), view.message_lines.end(),
                       [&](const std::string& line) { return line.find(words) != std::string::npos; });
  };
  CAPTURE(view.message_lines.size());
  CHECK(says("rank 0 sends"));
  CHECK(says("to rank 1, which never receives it (the run failed)"));
  CHECK(says("rank 2 waits for 24 B from rank 1: they never come (the run failed)"));
  apply(state, JumpTo{3});  // a later step does not repeat the wait
  const FrameView later = build_frame(state);
  for (const std::string& line : later.message_lines)
    CHECK(line.find("never come") == std::string::npos);
}
