// The overview (gui/layout_overview.hpp), where the ranks are too many for
// boxes whose values can be read: every rank a chip, one rank in full in the
// focus box, the one the learner picked or the one the step follows; a click
// on a box picks its rank. all_to_all at 16 ranks shows where data lands;
// ddp_step at 16 ranks is a ring; and a run recorded elsewhere (real
// threads, no values) reads as the simulated one does.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/layout.hpp"
#include "gui/state.hpp"
#include "gui/walkthrough.hpp"
#include "simulator/cost.hpp"
#include "simulator/record.hpp"
#include "test_gui_checks.hpp"

using namespace ringlab;
using namespace ringlab::gui;
using namespace ringlab::gui::test;

namespace {

// The canvas 1280x800 leaves under a sentence of two lines.
Vec2 default_canvas() { return canvases_of({1280, 800}).front(); }

// The index of a rank's buffer by its label (-1: none).
int buffer_named(const RankPanel& panel, const std::string& label) {
  for (std::size_t b = 0; b < panel.buffers.size(); ++b)
    if (panel.buffers[b].label == label) return static_cast<int>(b);
  return -1;
}

bool shows_buffer(const PanelLayout& box, int buffer) {
  return std::any_of(box.cells.begin(), box.cells.end(),
                     [&](const CellItem& cell) { return cell.buffer == buffer; });
}

}  // namespace

TEST_CASE("the focus box shows the rank the learner picked, else the one the step follows") {
  const LayoutFonts fonts = window_fonts();
  GuiState state = make_state("ddp_step", 16);
  apply(state, JumpTo{4});  // "rank 1 sends chunk 0 of bucket 0 to rank 2, ..."
  const FrameView view = build_frame(state);
  REQUIRE(view.subject == 2);
  CHECK(focus_rank(view, -1) == 2);
  CHECK(focus_rank(view, 9) == 9);
  FrameView silent = view;  // a frame that follows nobody
  silent.subject = -1;
  CHECK(focus_rank(silent, -1) == 0);

  const RanksLayout followed = layout_ranks(view, default_canvas(), fonts);
  REQUIRE(followed.overview);
  CHECK(followed.focus == 2);
  CHECK(followed.focus_box.rank == 2);
  for (const PanelLayout& chip : followed.panels) {
    CHECK(chip.chip);
    CHECK(chip.focus == (chip.rank == 2));
  }
  // Its hint says how to pick another; once picked, how to follow again.
  auto hint_of = [](const RanksLayout& layout) {
    std::string all;
    for (const TextItem& text : layout.focus_box.texts) all += text.text + "\n";
    return all;
  };
  CHECK(hint_of(followed).find("click") != std::string::npos);
  const RanksLayout picked = layout_ranks(view, default_canvas(), fonts, 9);
  CHECK(picked.focus == 9);
  CHECK(picked.focus_box.rank == 9);
  CHECK(hint_of(picked).find("Esc") != std::string::npos);
  CHECK(picked.panels[9].focus);
  CHECK_FALSE(picked.panels[2].focus);
}

TEST_CASE("a click picks the rank whose box, chip or focus box it lands on") {
  const LayoutFonts fonts = window_fonts();
  GuiState state = make_state("ddp_step", 16);
  apply(state, JumpTo{4});
  const RanksLayout layout = layout_ranks(build_frame(state), default_canvas(), fonts, 7);
  REQUIRE(layout.overview);
  for (const PanelLayout& chip : layout.panels)
    CHECK(rank_at(layout, chip.box.center()) == chip.rank);
  CHECK(rank_at(layout, layout.focus_box.box.center()) == 7);
  CHECK(rank_at(layout, {1, 1}) == -1);  // the canvas' corner: nobody's
  // Where every box shows whole, a click picks its rank all the same, and
  // the picked box is ringed.
  GuiState small = make_state("ring_allreduce");
  const RanksLayout whole = layout_ranks(build_frame(small), default_canvas(), fonts, 3);
  REQUIRE_FALSE(whole.overview);
  for (const PanelLayout& box : whole.panels) {
    CHECK(rank_at(whole, box.box.center()) == box.rank);
    CHECK(box.focus == (box.rank == 3));
  }
}

TEST_CASE("ddp_step and horovod_step at 16 ranks: a ring of chips, the focus box in its middle") {
  // Issue 34: a grid, ring arrows cutting across other ranks' boxes, values
  // too small to read.
  const LayoutFonts fonts = window_fonts();
  for (const std::string scenario : {"ddp_step", "horovod_step"}) {
    GuiState state = make_state(scenario, 16);
    for (int frame = 0; frame < frame_count(state); frame += 7) {
      apply(state, JumpTo{frame});
      const FrameView view = build_frame(state);
      const RanksLayout layout = layout_ranks(view, default_canvas(), fonts);
      CAPTURE(scenario);
      CAPTURE(frame);
      CHECK(layout.arrangement == "ring");
      REQUIRE(layout.overview);
      // In the ring's middle: inside the hull of the chips' centers.
      Vec2 lowest{1e9f, 1e9f}, highest{-1e9f, -1e9f};
      for (const PanelLayout& chip : layout.panels) {
        lowest = {std::min(lowest.x, chip.box.center().x), std::min(lowest.y, chip.box.center().y)};
        highest = {std::max(highest.x, chip.box.center().x),
                   std::max(highest.y, chip.box.center().y)};
      }
      CHECK(Rect{lowest, highest}.contains(layout.focus_box.box));
      for (const ArrowLayout& arrow : layout.arrows) {
        CHECK_FALSE(arrow.faint);  // a ring's messages go between neighbours
        CHECK_FALSE(layout.focus_box.box.crossed_by(arrow.from, arrow.to));
      }
      CHECK(unreadable_cells(layout, view).empty());
    }
  }
}

TEST_CASE("all_to_all at 16 ranks shows where data lands: every rank's recv") {
  // Issue 34: 16 crossing arrows with labels in the centre, and no receive
  // buffer drawn.
  const LayoutFonts fonts = window_fonts();
  GuiState state = make_state("all_to_all", 16);
  for (int frame = 1; frame < frame_count(state); ++frame) {
    apply(state, JumpTo{frame});
    const FrameView view = build_frame(state);
    const RanksLayout layout = layout_ranks(view, default_canvas(), fonts);
    CAPTURE(frame);
    REQUIRE(layout.overview);
    for (const PanelLayout& chip : layout.panels) {
      const int recv = buffer_named(view.ranks[static_cast<std::size_t>(chip.rank)], "recv");
      REQUIRE(recv >= 0);
      CHECK(shows_buffer(chip, recv));
    }
    // The focus box: its recv, every value readable.
    const RankPanel& focus = view.ranks[static_cast<std::size_t>(layout.focus)];
    CHECK(shows_buffer(layout.focus_box, buffer_named(focus, "recv")));
    CHECK(unreadable_cells(layout, view).empty());
    // The focus's two messages (the block it sends, the one it receives)
    // go to and from its box, labelled; the other 14 are faint, unlabelled.
    int full = 0;
    for (std::size_t i = 0; i < layout.arrows.size(); ++i) {
      const ArrowLayout& arrow = layout.arrows[i];
      const bool focus_s = arrow.src == layout.focus || arrow.dst == layout.focus;
      CHECK(arrow.faint == !focus_s);
      if (arrow.faint) continue;
      ++full;
      // An end at the box: its edge, a few pixels out and to the side.
      const Rect box = layout.focus_box.box.grown(14);
      CHECK(box.contains(Rect::at(arrow.src == layout.focus ? arrow.from : arrow.to, {0, 0})));
    }
    CHECK(full == 2);
    CHECK(layout.labels.size() == 2);
    for (const LabelLayout& label : layout.labels) CHECK_FALSE(layout.arrows[label.arrow].faint);
  }
}

TEST_CASE("a run recorded elsewhere (real threads, no values) reads as the simulated one") {
  // The GUI draws the record (simulator/record.hpp), wherever it came from:
  // here all_reduce on 16 real threads over the in-process transport,
  // recording provenance only, as a large or real run's trace would.
  const LayoutFonts fonts = window_fonts();
  const Settings settings = scenario_settings("ring_allreduce", 16);
  const GuiState simulated = make_state(settings);
  sim::Scenario scenario;
  scenario.collective = Collective::AllReduce;
  scenario.algorithm = "ring";
  scenario.ranks = 16;
  scenario.count = 16;
  scenario.dtype = DType::Int64;
  scenario.values = sim::ValueMode::Off;
  scenario.execution = sim::RankExecution::Threads;
  Act act;
  act.title = "all_reduce (ring, recorded elsewhere)";
  act.run = sim::simulate(scenario);
  REQUIRE_FALSE(act.run.values_recorded);
  act.prediction = sim::predict(act.run, gui_cost_model());
  GuiState recorded = make_state(settings, {act});
  REQUIRE(frame_count(recorded) == frame_count(simulated));
  for (int frame = 0; frame < frame_count(recorded); frame += 3) {
    GuiState a = simulated;
    apply(a, JumpTo{frame});
    apply(recorded, JumpTo{frame});
    const FrameView view = build_frame(recorded);
    const FrameView reference = build_frame(a);
    CAPTURE(frame);
    CHECK(view.subject == reference.subject);
    for (const Vec2& canvas : canvases_of({1280, 800})) {
      const RanksLayout layout = layout_ranks(view, canvas, fonts);
      const RanksLayout expected = layout_ranks(reference, canvas, fonts);
      CHECK(layout.arrangement == expected.arrangement);
      CHECK(layout.overview == expected.overview);
      CHECK(layout.focus == expected.focus);
      CHECK(problems(layout, view.ranks.size()).empty());
      CHECK(overlapping_texts(layout).empty());
      CHECK(unreadable_cells(layout, view).empty());
      CHECK(hidden_data(layout, view).empty());
      // The same colors in every chip, and no value made up.
      for (std::size_t r = 0; r < layout.panels.size(); ++r) {
        const std::vector<CellItem>& cells = layout.panels[r].cells;
        const std::vector<CellItem>& want = expected.panels[r].cells;
        REQUIRE(cells.size() == want.size());
        for (std::size_t c = 0; c < cells.size(); ++c) {
          CHECK(cells[c].ranks == want[c].ranks);
          CHECK(cells[c].value.text.empty());
        }
      }
      for (const CellItem& cell : layout.focus_box.cells) CHECK(cell.value.text.empty());
    }
    for (const RankPanel& panel : view.ranks)
      CHECK(panel.line.find("values not recorded") != std::string::npos);
  }
}
