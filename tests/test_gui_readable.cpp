// Every scenario at 2, 4, 8 and 16 ranks reads at 1280x800, the window's
// default: at every frame, laid out with the window's own fonts on the
// canvases that size leaves, no text overlaps another or lies on the box of a
// rank it does not belong to, every value and ranks label a cell shows is of
// a readable size, and every buffer a step writes shows its cells.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/layout.hpp"
#include "gui/state.hpp"
#include "test_gui_checks.hpp"

using namespace ringlab;
using namespace ringlab::gui;
using namespace ringlab::gui::test;

namespace {

// The world sizes to try: 2, 4, 8 and 16, and for the parameter server every
// size from 2 to 16 (each its own split of servers and workers).
std::vector<int> worlds_of(const std::string& scenario) {
  if (scenario != "parameter_server") return {2, 4, 8, 16};
  std::vector<int> worlds;
  for (int ranks = kMinRanks; ranks <= kMaxRanks; ++ranks) worlds.push_back(ranks);
  return worlds;
}

using Check = std::vector<std::string> (*)(const RanksLayout&, const FrameView&);

struct NamedCheck {
  const char* name;
  Check check;
};

const NamedCheck kChecks[] = {
    {"boxes", [](const RanksLayout& l, const FrameView& v) { return problems(l, v.ranks.size()); }},
    {"overlapping text",
     [](const RanksLayout& l, const FrameView&) { return overlapping_texts(l); }},
    {"unreadable cells", unreadable_cells},
    {"hidden data", hidden_data},
};

}  // namespace

TEST_CASE("every scenario at 2, 4, 8 and 16 ranks reads at 1280x800") {
  const LayoutFonts fonts = window_fonts();
  const std::vector<Vec2> canvases = canvases_of({1280, 800});
  int layouts = 0;
  for (const std::string& scenario : scenario_names()) {
    for (int ranks : worlds_of(scenario)) {
      GuiState state = make_state(scenario, ranks);
      // Per check: the frames it failed, and what was wrong in the first.
      std::map<std::string, std::pair<int, std::string>> failed;
      const int frames = frame_count(state);
      for (int frame = 0; frame < frames; ++frame) {
        apply(state, JumpTo{frame});
        const FrameView view = build_frame(state);
        for (const Vec2& canvas : canvases) {
          const RanksLayout layout = layout_ranks(view, canvas, fonts);
          ++layouts;
          for (const NamedCheck& check : kChecks) {
            const std::vector<std::string> found = check.check(layout, view);
            if (found.empty()) continue;
            auto& [count, first] = failed[check.name];
            if (count++ == 0)
              first = "frame " + std::to_string(frame) + ", canvas " +
                      std::to_string(static_cast<int>(canvas.y)) + " high, " + layout.arrangement +
                      " at detail " + std::to_string(layout.detail) + ": " + found.front() +
                      " (and " + std::to_string(found.size() - 1) + " more)";
          }
        }
      }
      for (const auto& [check, what] : failed) {
        CAPTURE(scenario);
        CAPTURE(ranks);
        FAIL_CHECK(check << ": " << what.first << " of " << 2 * frames << " layouts, first "
                         << what.second);
      }
    }
  }
  MESSAGE(layouts << " layouts checked at 1280x800");
}

// ---- the checks themselves -------------------------------------------------------

TEST_CASE("the checks above catch overlapping text, small values and hidden data") {
  const LayoutFonts fonts = window_fonts();
  const Vec2 canvas = canvases_of({1280, 800}).front();
  // A layout of whole boxes that passes every check, then broken by hand.
  GuiState state = make_state("ddp_step");
  apply(state, JumpTo{4});  // bucket 0's all_reduce while net2's backward runs
  const FrameView view = build_frame(state);
  const RanksLayout good = layout_ranks(view, canvas, fonts);
  REQUIRE_FALSE(good.overview);
  for (const NamedCheck& check : kChecks) REQUIRE(check.check(good, view).empty());
  REQUIRE(good.panels.size() == 2);
  REQUIRE_FALSE(good.labels.empty());

  RanksLayout onto_box = good;  // an arrow's label on... its own box's cells
  onto_box.labels[0].box = Rect::at(onto_box.panels[1].cells[0].box.min, {40, 12});
  CHECK_FALSE(overlapping_texts(onto_box).empty());
  RanksLayout two_texts = good;  // a box's line over its title
  two_texts.panels[0].texts[1].at = two_texts.panels[0].texts[0].at;
  CHECK_FALSE(overlapping_texts(two_texts).empty());
  RanksLayout small = good;  // a value drawn at 8 px
  REQUIRE_FALSE(small.panels[0].cells.back().value.text.empty());
  small.panels[0].cells.back().value.size = 8;
  CHECK_FALSE(unreadable_cells(small, view).empty());
  RanksLayout chip = good;  // a box without values, and no focus box
  chip.panels[1].chip = true;
  CHECK_FALSE(unreadable_cells(chip, view).empty());

  // Hidden data: a box cut short; a written buffer without its cells (here
  // bucket 0, written in this frame); a heading whose cells are gone.
  RanksLayout cut = good;
  cut.panels[0].cut = true;
  CHECK_FALSE(hidden_data(cut, view).empty());
  int written = -1;
  for (std::size_t b = 0; b < view.ranks[0].buffers.size(); ++b)
    if (view.ranks[0].buffers[b].changed && written < 0) written = static_cast<int>(b);
  REQUIRE(written >= 0);
  RanksLayout unwritten = good;
  std::vector<CellItem>& cells = unwritten.panels[0].cells;
  cells.erase(std::remove_if(cells.begin(), cells.end(),
                             [&](const CellItem& cell) { return cell.buffer == written; }),
              cells.end());
  const std::vector<std::string> found = hidden_data(unwritten, view);
  CHECK(found.size() >= 2);  // not shown, and its heading has no cells under it
  RanksLayout empty = good;
  empty.panels[1].cells.clear();
  CHECK_FALSE(hidden_data(empty, view).empty());
}

TEST_CASE("in an overview the checks read the focus box: its values, and what the chip shows") {
  const LayoutFonts fonts = window_fonts();
  GuiState state = make_state("all_to_all", 16);
  apply(state, JumpTo{4});
  const FrameView view = build_frame(state);
  const RanksLayout good = layout_ranks(view, canvases_of({1280, 800}).front(), fonts);
  REQUIRE(good.overview);
  for (const NamedCheck& check : kChecks) REQUIRE(check.check(good, view).empty());
  RanksLayout small = good;  // a value of the focus box at 8 px
  REQUIRE_FALSE(small.focus_box.cells.empty());
  small.focus_box.cells.front().value.size = 8;
  CHECK_FALSE(unreadable_cells(small, view).empty());
  RanksLayout missing = good;  // the focus box without the recv its chip shows
  std::vector<CellItem>& cells = missing.focus_box.cells;
  const int recv = cells.back().buffer;
  cells.erase(std::remove_if(cells.begin(), cells.end(),
                             [&](const CellItem& cell) { return cell.buffer == recv; }),
              cells.end());
  CHECK_FALSE(unreadable_cells(missing, view).empty());
  RanksLayout covered = good;  // a label on a chip that is not its arrow's
  REQUIRE_FALSE(covered.labels.empty());
  const LabelLayout& label = covered.labels.front();
  const ArrowLayout& arrow = covered.arrows[static_cast<std::size_t>(label.arrow)];
  for (const PanelLayout& chip : covered.panels)
    if (chip.rank != arrow.src && chip.rank != arrow.dst) {
      covered.labels.front().box = Rect::at(chip.box.min, label.box.max - label.box.min);
      break;
    }
  CHECK_FALSE(overlapping_texts(covered).empty());
}

TEST_CASE("where not even the overview fits, boxes are cut, and the checks say so") {
  // A window far smaller than the GUI supports: what the checks flag is what
  // 1280x800 must never show.
  const LayoutFonts fonts = window_fonts();
  GuiState state = make_state("ddp_step", 16);
  apply(state, JumpTo{4});
  const FrameView view = build_frame(state);
  const RanksLayout layout = layout_ranks(view, {420, 300}, fonts);
  CHECK(layout.detail == kCutDetail);
  CHECK_FALSE(layout.overview);
  CHECK(problems(layout, view.ranks.size()).empty());  // still on the canvas, apart
  CHECK_FALSE(hidden_data(layout, view).empty());
}
