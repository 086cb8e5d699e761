// Every scenario at 2, 4, 8 and 16 ranks reads at 1280x800, the window's
// default: at every frame, laid out with the window's own fonts on the
// canvases that size leaves, no text overlaps another or lies on the box of a
// rank it does not belong to, every value and ranks label a cell shows is of
// a readable size, and every buffer a step writes shows its cells.
#include <doctest/doctest.h>

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
    {"hidden writes", hidden_writes},
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
