// The canvas layout without a window: for every scenario, at every frame and
// at several window sizes, no two rank boxes intersect, every box, text and
// label lies inside the canvas (and a box's texts and cells inside the box);
// every step changes something on the canvas; the parameter server names
// ranks by role, with rank numbers only in the legend.
//
// Built with the GUI, the layout is measured with the fonts the window loads
// (DejaVu through Dear ImGui's atlas, no window needed), and the metrics are
// checked against ImGui's own measuring; without it, with made-up metrics.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/layout.hpp"
#include "gui/state.hpp"

#ifdef RINGLAB_TEST_REAL_FONTS
#include "gui/fonts.hpp"
#include "imgui.h"
#endif

using namespace ringlab;
using namespace ringlab::gui;

namespace {

// Window sizes: the smallest supported, the default, a large one, and a tall
// narrow one.
struct Display {
  float width;
  float height;
};
constexpr Display kDisplays[] = {{1024, 640}, {1280, 800}, {1600, 1000}, {1024, 1366}};

// The canvases a display leaves (window_layout's side panel and log; above
// the canvas the controls, the title and a sentence of one to four lines).
std::vector<Vec2> canvases_of(Display display) {
  const WindowLayout window = window_layout({display.width, display.height});
  const float width = display.width - window.side_width - 20;
  std::vector<Vec2> canvases;
  for (float above : {110.0f, 190.0f})
    canvases.push_back({width, display.height - window.log_height - above});
  return canvases;
}

std::vector<LayoutFonts> fonts_to_try() {
  std::vector<LayoutFonts> fonts;
  // Made-up metrics: every glyph 0.6 em (DejaVu Sans Mono is 0.602), and a
  // wide "ui" font at 0.75 em, so that nothing relies on narrow text.
  fonts.push_back({uniform_metrics(17, 0.75f), uniform_metrics(17, 0.602f)});
#ifdef RINGLAB_TEST_REAL_FONTS
  ImGui::CreateContext();
  const Fonts loaded = load_fonts(ImGui::GetIO());
  ImGui::GetIO().Fonts->Build();
  fonts.push_back(layout_fonts(loaded));
  ImGui::DestroyContext();
#endif
  return fonts;
}

std::string text_of(const Rect& r) {
  char text[96];
  std::snprintf(text, sizeof text, "[%.1f,%.1f - %.1f,%.1f]", r.min.x, r.min.y, r.max.x, r.max.y);
  return text;
}

// What is wrong with a layout (empty: nothing).
std::vector<std::string> problems(const RanksLayout& layout, std::size_t ranks) {
  std::vector<std::string> found;
  const Rect canvas = Rect::at({0, 0}, layout.canvas);
  if (layout.panels.size() != ranks)
    found.push_back(std::to_string(layout.panels.size()) + " boxes for " + std::to_string(ranks) +
                    " ranks");
  for (std::size_t a = 0; a < layout.panels.size(); ++a) {
    const PanelLayout& panel = layout.panels[a];
    const std::string name = "box of rank " + std::to_string(panel.rank) + " " + text_of(panel.box);
    if (!canvas.contains(panel.box)) found.push_back(name + " leaves the canvas");
    for (std::size_t b = a + 1; b < layout.panels.size(); ++b)
      if (panel.box.intersects(layout.panels[b].box))
        found.push_back(name + " intersects the box of rank " +
                        std::to_string(layout.panels[b].rank) + " " +
                        text_of(layout.panels[b].box));
    for (const TextItem& text : panel.texts)
      if (!panel.box.contains(text.box()))
        found.push_back("text '" + text.text + "' " + text_of(text.box()) + " leaves its " + name);
    for (const CellItem& cell : panel.cells) {
      if (!panel.box.contains(cell.box))
        found.push_back("a cell " + text_of(cell.box) + " leaves its " + name);
      if (!cell.box.contains(cell.value.box()))
        found.push_back("the value '" + cell.value.text + "' leaves its cell in the " + name);
    }
  }
  for (const LabelLayout& label : layout.labels) {
    if (!canvas.contains(label.box))
      found.push_back("label '" + label.text.text + "' " + text_of(label.box) +
                      " leaves the canvas " + text_of(canvas));
    if (!label.box.contains(label.text.box()))
      found.push_back("label '" + label.text.text + "' leaves its backing");
  }
  return found;
}

// Everything the canvas shows, as text: two frames that give the same
// string look the same.
std::string visible(const RanksLayout& layout) {
  std::ostringstream out;
  for (const PanelLayout& panel : layout.panels) {
    out << "box " << panel.rank << (panel.active ? " active" : "") << "\n";
    for (const TextItem& text : panel.texts) out << "  " << text.text << "\n";
    for (const CellItem& cell : panel.cells) {
      out << "  [" << cell.value.text;
      for (int rank : cell.ranks) out << " r" << rank;
      out << "]";
    }
    out << "\n";
  }
  for (const ArrowLayout& arrow : layout.arrows) out << arrow.src << "->" << arrow.dst << "\n";
  for (const LabelLayout& label : layout.labels) out << label.text.text << "\n";
  return out.str();
}

}  // namespace

TEST_CASE(
    "no two rank boxes intersect and everything stays on the canvas, at every frame and size") {
  const std::vector<LayoutFonts> all_fonts = fonts_to_try();
  int layouts = 0;
  for (const LayoutFonts& fonts : all_fonts) {
    for (const std::string& scenario : scenario_names()) {
      // The scenario's own world, the largest the GUI allows, and the
      // smallest (the parameter server needs a server and two workers here).
      for (int ranks : {0, kMaxRanks, scenario == "parameter_server" ? 3 : kMinRanks}) {
        GuiState state = make_state(scenario, ranks);
        const int frames = frame_count(state);
        for (int frame = 0; frame < frames; ++frame) {
          // Every frame of the scenario's own world; a few of the others.
          if (ranks != 0 && frame != 1 && frame != frames / 2 && frame != frames - 1) continue;
          apply(state, JumpTo{frame});
          const FrameView view = build_frame(state);
          for (const Display& display : kDisplays) {
            for (const Vec2& canvas : canvases_of(display)) {
              const RanksLayout layout = layout_ranks(view, canvas, fonts);
              ++layouts;
              const std::vector<std::string> found = problems(layout, view.ranks.size());
              if (found.empty()) continue;
              CAPTURE(scenario);
              CAPTURE(state.settings.ranks);
              CAPTURE(frame);
              CAPTURE(display.width);
              CAPTURE(display.height);
              CAPTURE(layout.arrangement);
              CAPTURE(layout.detail);
              FAIL_CHECK(found.front() << " (and " << found.size() - 1 << " more)");
            }
          }
        }
      }
    }
  }
  MESSAGE(layouts << " layouts checked");
}

TEST_CASE("the checks above catch overlapping boxes and labels off the canvas") {
  // A correct layout, then broken by hand: the check must notice each fault.
  const LayoutFonts fonts{uniform_metrics(17, 0.6f), uniform_metrics(17, 0.6f)};
  GuiState state = make_state("parameter_server");
  apply(state, JumpTo{11});
  const FrameView view = build_frame(state);
  const RanksLayout good = layout_ranks(view, {900, 520}, fonts);
  REQUIRE(problems(good, view.ranks.size()).empty());
  REQUIRE(good.labels.size() >= 1);

  RanksLayout overlapping = good;
  const Vec2 shift = overlapping.panels[1].box.min - overlapping.panels[2].box.min;
  overlapping.panels[2].box = {overlapping.panels[2].box.min + shift * 0.5f,
                               overlapping.panels[2].box.max + shift * 0.5f};
  CHECK_FALSE(problems(overlapping, view.ranks.size()).empty());

  RanksLayout label_outside = good;
  label_outside.labels[0].box.min.x = -30;
  CHECK_FALSE(problems(label_outside, view.ranks.size()).empty());

  RanksLayout text_outside = good;
  text_outside.panels[0].texts[0].at.x = text_outside.panels[0].box.max.x - 5;
  CHECK_FALSE(problems(text_outside, view.ranks.size()).empty());
}

TEST_CASE("the parameter server at 1280x800 keeps every buffer a step touches in view") {
  // Issue: at 1280x800 the boxes covered each other. Now they sit in two rows
  // and show at least the rank's tensor and what the step reads or writes.
  for (const LayoutFonts& fonts : fonts_to_try()) {
    GuiState state = make_state("parameter_server");
    for (int frame = 0; frame < frame_count(state); ++frame) {
      apply(state, JumpTo{frame});
      const FrameView view = build_frame(state);
      const RanksLayout layout = layout_ranks(view, {900, 560}, fonts);
      CAPTURE(frame);
      CHECK(layout.arrangement == "groups");
      for (const PanelLayout& panel : layout.panels) {
        CHECK_FALSE(panel.cut);
        // Servers above workers.
        if (panel.rank < 2) CHECK(panel.box.max.y < layout.panels[2].box.min.y);
        const RankPanel& rank = view.ranks[static_cast<std::size_t>(panel.rank)];
        for (const BufferView& buffer : rank.buffers) {
          // The rank's tensor is always there, in the article's line.
          if (buffer.primary || (!buffer.changed && !buffer.sent)) continue;
          bool shown = false;
          for (const TextItem& text : panel.texts)
            shown = shown || text.text.rfind(buffer.label, 0) == 0;
          CHECK_MESSAGE(shown, rank.role << "'s " << buffer.label << " is not shown");
        }
      }
    }
  }
}

TEST_CASE("every step of every scenario changes something on the canvas") {
  // Issue: two steps of the parameter server looked the same. Each frame
  // differs from the one before in a box's texts, cells or border, or in the
  // arrows and their labels, at the default size and at the smallest.
  const LayoutFonts fonts{uniform_metrics(17, 0.62f), uniform_metrics(17, 0.602f)};
  for (const Display& display : {kDisplays[0], kDisplays[1]}) {
    const Vec2 canvas = canvases_of(display).back();
    for (const std::string& scenario : scenario_names()) {
      GuiState state = make_state(scenario);
      std::string previous;
      for (int frame = 0; frame < frame_count(state); ++frame) {
        apply(state, JumpTo{frame});
        const std::string now = visible(layout_ranks(build_frame(state), canvas, fonts));
        CAPTURE(scenario);
        CAPTURE(display.width);
        CAPTURE(now);
        if (frame > 0)
          CHECK_MESSAGE(now != previous, "frame " << frame << " looks like frame " << frame - 1);
        previous = now;
      }
    }
  }
}

TEST_CASE("the training steps at their 2 ranks: no box cut short, no label over a box's content") {
  // ddp_step and horovod_step are walkthroughs like the others (the tests
  // above lay out every frame of theirs too); at their own world size and
  // from the smallest window up, no box is cut short, and no arrow's label
  // covers a ddp_step box's texts or cells.
  const std::vector<std::string> names = scenario_names();
  for (const std::string scenario : {"ddp_step", "horovod_step"}) {
    REQUIRE(std::find(names.begin(), names.end(), scenario) != names.end());
    for (const LayoutFonts& fonts : fonts_to_try()) {
      GuiState state = make_state(scenario);
      REQUIRE(state.settings.ranks == 2);
      for (int frame = 0; frame < frame_count(state); ++frame) {
        apply(state, JumpTo{frame});
        const FrameView view = build_frame(state);
        for (const Display& display : kDisplays) {
          for (const Vec2& canvas : canvases_of(display)) {
            const RanksLayout layout = layout_ranks(view, canvas, fonts);
            CAPTURE(scenario);
            CAPTURE(frame);
            CAPTURE(display.width);
            CAPTURE(display.height);
            CAPTURE(layout.detail);
            CHECK(problems(layout, view.ranks.size()).empty());
            for (const PanelLayout& panel : layout.panels) {
              CHECK_FALSE(panel.cut);
              // A label may touch a box's border, never what is written in it
              // (horovod_step's taller boxes leave no room for that at
              // 1024x640).
              if (std::string(scenario) != "ddp_step") continue;
              for (const LabelLayout& label : layout.labels) {
                CAPTURE(label.text.text);
                for (const TextItem& text : panel.texts)
                  CHECK(label.box.overlap_area(text.box()) == 0.0f);
                for (const CellItem& cell : panel.cells)
                  CHECK(label.box.overlap_area(cell.box) == 0.0f);
              }
            }
          }
        }
      }
    }
  }
}

TEST_CASE("the parameter server names ranks by role; rank numbers only in the legend") {
  GuiState state = make_state("parameter_server");
  const sim::Run& run = state.recording.acts[0].run;
  const int servers = 2;
  REQUIRE(run.roles[servers] == "worker 0");
  // Rank numbers as the simulator writes them: "r2", "rank 2", "from 2", "to 2".
  const std::regex rank_number(R"(\br\d+\b|\brank \d|\b(from|to|of) \d+\b|\d+->)");
  auto check_text = [&](const std::string& text) {
    CAPTURE(text);
    CHECK_FALSE(std::regex_search(text, rank_number));
  };
  for (const std::string& sentence : state.recording.sentences) {
    // "step 3 of 21" and "elements [0, 3) of update" count steps and keys.
    std::string without_counts = std::regex_replace(sentence, std::regex(R"(step \d+ of \d+)"), "");
    without_counts = std::regex_replace(without_counts, std::regex(R"(\[\d+, \d+\))"), "");
    check_text(without_counts);
  }
  bool saw_worker_label = false;
  for (int frame = 0; frame < frame_count(state); ++frame) {
    apply(state, JumpTo{frame});
    const FrameView view = build_frame(state);
    for (const RankPanel& panel : view.ranks) {
      check_text(panel.role);
      for (const BufferView& buffer : panel.buffers) check_text(buffer.label);
    }
    for (const ArrowView& arrow : view.arrows) {
      check_text(std::regex_replace(arrow.label, std::regex(R"(\[\d+, \d+\))"), ""));
      // Whose input a message carries is named by role: worker w is rank
      // servers + w, so a message from rank 2 carries "worker 0".
      if (arrow.src == servers && arrow.label.find("(worker 0)") != std::string::npos)
        saw_worker_label = true;
    }
    check_text(view.cost.bottleneck);
    for (const std::string& line : view.message_lines)
      check_text(std::regex_replace(line, std::regex(R"(\[\d+, \d+\)|\[\d+ B\])"), ""));
    // The legend is the one place with rank numbers.
    REQUIRE(view.legend.size() == 5);
    CHECK(view.legend[0] == "server 0 (rank 0)");
    CHECK(view.legend[2] == "worker 0 (rank 2)");
    CHECK(view.legend[4] == "worker 2 (rank 4)");
  }
  CHECK(saw_worker_label);
  // A collective's ranks are their numbers: the legend says "r0", as do the
  // arrows' provenance labels ("chunk 0 (r0+r3)").
  GuiState ring = make_state("ring_allreduce");
  apply(ring, JumpTo{2});
  const FrameView view = build_frame(ring);
  CHECK(view.legend == std::vector<std::string>{"r0", "r1", "r2", "r3"});
  CHECK(view.arrows.front().label.find("+r") != std::string::npos);
}

#ifdef RINGLAB_TEST_REAL_FONTS
TEST_CASE("the layout measures text exactly as Dear ImGui does") {
  ImGui::CreateContext();
  const Fonts loaded = load_fonts(ImGui::GetIO());
  ImGui::GetIO().Fonts->Build();
  const LayoutFonts metrics = layout_fonts(loaded);
  for (const char* text : {"Rank 0 has data tensor([16, 20])", "worker 0  (sends, receives)",
                           "elements [0, 3) of update (server 1 + workers 0, 2) +", "102.5", "",
                           "two\nlines", "trailing newline\n", "tab\tand é ü"}) {
    CAPTURE(text);
    for (float size : {17.0f, 15.3f, 12.0f}) {
      const ImVec2 ui = loaded.ui->CalcTextSizeA(size, 1e9f, 0, text);
      const ImVec2 mono = loaded.mono->CalcTextSizeA(size, 1e9f, 0, text);
      CHECK(metrics.ui.measure(text, size).x == doctest::Approx(ui.x).epsilon(1e-4));
      CHECK(metrics.ui.measure(text, size).y == doctest::Approx(ui.y));
      CHECK(metrics.mono.measure(text, size).x == doctest::Approx(mono.x).epsilon(1e-4));
    }
  }
  ImGui::DestroyContext();
}
#endif
