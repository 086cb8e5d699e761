// The canvas layout without a window: for every scenario, at every frame and
// at several window sizes, no two rank boxes intersect, every box, text and
// label lies inside the canvas (and a box's texts and cells inside the box,
// a cell's value and ranks label inside the cell); every step changes
// something on the canvas; the parameter server names ranks by role, with
// rank numbers only in the legend. A ring of up to 16 ranks is a ring whose
// arrows cross neither each other nor a box; the 16 rank colors are far
// apart (CIEDE2000); at 1280x800 the whole window fits, drawn by Dear
// ImGui without a display; and there a click on a rank, '[', ']' and Escape
// pick the rank shown in full.
//
// Built with the GUI, the layout is measured with the fonts the window loads
// (DejaVu through Dear ImGui's atlas, no window needed), and the metrics are
// checked against ImGui's own measuring; without it, with made-up metrics.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/layout.hpp"
#include "gui/rank_colors.hpp"
#include "gui/state.hpp"
#include "test_gui_checks.hpp"

#ifdef RINGLAB_TEST_REAL_FONTS
#include "gui/draw.hpp"
#include "gui/fonts.hpp"
#include "gui/palette.hpp"
#include "imgui.h"
#include "imgui_internal.h"  // the windows' content and scroll sizes
#endif

using namespace ringlab;
using namespace ringlab::gui;
using namespace ringlab::gui::test;

namespace {

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
  if (layout.overview) {
    out << "focus box " << layout.focus << "\n";
    for (const TextItem& text : layout.focus_box.texts) out << "  " << text.text << "\n";
    for (const CellItem& cell : layout.focus_box.cells) out << "  [" << cell.value.text << "]";
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
namespace {

// The windows Dear ImGui drew whose contents are taller than they are: name,
// and by how many pixels. Child windows are named "parent/child_ID".
std::vector<std::string> overflowing_windows() {
  std::vector<std::string> found;
  for (ImGuiWindow* window : GImGui->Windows) {
    if (!window->WasActive || (window->Flags & ImGuiWindowFlags_Tooltip)) continue;
    const std::string name = window->Name;
    // The step log, the step's messages and the bytes table scroll on purpose.
    if (name.find("/log_") != std::string::npos || name.find("/messages_") != std::string::npos ||
        name.find("bytes") != std::string::npos || name.rfind("##", 0) == 0)
      continue;
    if (window->ScrollMax.y > 0.5f)
      found.push_back(name + " is " + std::to_string(static_cast<int>(window->ScrollMax.y)) +
                      " px too short for what it holds");
  }
  return found;
}

}  // namespace

TEST_CASE("at 1280x800 the whole window fits: the side panel and its legend are not cut") {
  // Issue 25: at 1280x800 the legend was cut off (the side panel scrolled).
  // Every scenario, at its own world and at 16 ranks, at a few frames, drawn
  // by Dear ImGui with the window's fonts and style, without a display.
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1280, 800);
  io.DeltaTime = 1.0f / 60;
  apply_style();
  const Fonts fonts = load_fonts(io);
  unsigned char* pixels = nullptr;
  int width = 0;
  int height = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);  // builds the atlas
  int drawn = 0;
  for (const std::string& scenario : scenario_names()) {
    for (int ranks : {0, kMaxRanks}) {
      GuiState state = make_state(scenario, ranks);
      const int frames = frame_count(state);
      for (int frame : {0, 1, frames / 2, frames - 1}) {
        apply(state, JumpTo{frame});
        FrameCache cache;
        // ImGui sizes windows from the previous frame's contents: a few frames.
        for (int pass = 0; pass < 3; ++pass) {
          ImGui::NewFrame();
          (void)draw_frame(state, fonts, cache);
          ImGui::Render();
        }
        ++drawn;
        const std::vector<std::string> found = overflowing_windows();
        CAPTURE(scenario);
        CAPTURE(state.settings.ranks);
        CAPTURE(frame);
        CHECK_MESSAGE(found.empty(), (found.empty() ? "" : found.front()));
        ImGuiWindow* legend = nullptr;
        for (ImGuiWindow* window : GImGui->Windows)
          if (std::string(window->Name).rfind("side/legend_", 0) == 0) legend = window;
        REQUIRE(legend != nullptr);
        // The legend lies inside the display, whole.
        CHECK(legend->Pos.y + legend->Size.y <= io.DisplaySize.y);
        CHECK(legend->ContentSize.y <= legend->Size.y);
      }
    }
  }
  MESSAGE(drawn << " frames drawn at 1280x800");
  ImGui::DestroyContext();
}

TEST_CASE("a click on a rank, '[', ']' and Escape pick the rank shown in full") {
  // The window's own controls, driven through Dear ImGui without a display:
  // the commands draw_frame returns are the ones the state tests apply.
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1280, 800);
  io.DeltaTime = 1.0f / 60;
  apply_style();
  const Fonts fonts = load_fonts(io);
  unsigned char* pixels = nullptr;
  int width = 0;
  int height = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
  GuiState state = make_state("ddp_step", 16);
  apply(state, JumpTo{4});  // the step follows rank 2
  FrameCache cache;
  auto frame = [&] {
    ImGui::NewFrame();
    std::vector<Command> commands = draw_frame(state, fonts, cache);
    ImGui::Render();
    for (const Command& command : commands) apply(state, command);
    return commands;
  };
  auto picks = [](const std::vector<Command>& commands) {
    std::vector<int> ranks;
    for (const Command& command : commands)
      if (const auto* pick = std::get_if<SelectRank>(&command)) ranks.push_back(pick->rank);
    return ranks;
  };
  for (int pass = 0; pass < 3; ++pass) frame();
  REQUIRE(cache.layout.overview);
  REQUIRE(cache.layout.focus == 2);
  // A click on rank 11's chip.
  const Vec2 chip = cache.canvas_min + cache.layout.panels[11].box.center();
  io.MousePos = ImVec2(chip.x, chip.y);
  frame();
  io.MouseDown[0] = true;
  CHECK(picks(frame()) == std::vector<int>{11});
  io.MouseDown[0] = false;
  frame();
  CHECK(state.selected_rank == 11);
  CHECK(cache.layout.focus_box.rank == 11);
  // ']' and '[' step from the rank shown; Escape follows the step again.
  io.MousePos = ImVec2(-1, -1);
  io.AddInputCharacter(']');
  CHECK(picks(frame()) == std::vector<int>{12});
  io.AddInputCharacter('[');
  io.AddInputCharacter('[');
  CHECK(picks(frame()) == std::vector<int>{11, 10});  // two presses, two ranks back
  CHECK(state.selected_rank == 10);
  io.KeyMap[ImGuiKey_Escape] = 256;  // as a platform backend maps its keys
  io.KeysDown[256] = true;
  CHECK(picks(frame()) == std::vector<int>{-1});
  io.KeysDown[256] = false;
  frame();
  CHECK(state.selected_rank == -1);
  CHECK(cache.layout.focus == 2);
  ImGui::DestroyContext();
}

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

// ---- the ring ------------------------------------------------------------------

namespace {

float cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }

// Whether two segments cross at a point inside both.
bool segments_cross(Vec2 a, Vec2 b, Vec2 c, Vec2 d) {
  const float d1 = cross(b - a, c - a);
  const float d2 = cross(b - a, d - a);
  const float d3 = cross(d - c, a - c);
  const float d4 = cross(d - c, b - c);
  return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

// The least distance between a box and an arrow, measured along the arrow
// at every pixel (0 where it passes through the box).
float distance_to_box(const Rect& box, const ArrowLayout& arrow) {
  const Vec2 d = arrow.to - arrow.from;
  const int steps = std::max(1, static_cast<int>(std::hypot(d.x, d.y)));
  float least = 1e9f;
  for (int k = 0; k <= steps; ++k) {
    const Vec2 p = arrow.from + d * (static_cast<float>(k) / static_cast<float>(steps));
    const float dx = std::max({box.min.x - p.x, 0.0f, p.x - box.max.x});
    const float dy = std::max({box.min.y - p.y, 0.0f, p.y - box.max.y});
    least = std::min(least, std::hypot(dx, dy));
  }
  return least;
}

// What is wrong with a ring (empty: nothing): rank 0 on top, the others
// clockwise; no arrow crosses another or a box it does not join (nor an
// overview's focus box); with the frame's `view`, every arrow that carries
// data has its label, beside it.
std::vector<std::string> ring_problems(const RanksLayout& layout, const FrameView* view) {
  std::vector<std::string> found;
  if (layout.arrangement != "ring") return {"arranged as a " + layout.arrangement + ", not a ring"};
  const std::vector<PanelLayout>& panels = layout.panels;
  Vec2 middle;
  for (const PanelLayout& panel : panels)
    middle = middle + panel.box.center() * (1.0f / panels.size());
  const float kTwoPi = 6.2831853f;
  auto angle = [&](std::size_t r) {  // clockwise from the top, in [-0.1, 2 pi - 0.1)
    const Vec2 d = panels[r].box.center() - middle;
    return std::fmod(std::atan2(d.x, -d.y) + kTwoPi + 0.1f, kTwoPi) - 0.1f;
  };
  if (std::fabs(panels[0].box.center().x - middle.x) > 1 || std::fabs(angle(0)) > 0.01f)
    found.push_back("rank 0 is not at the top " + text_of(panels[0].box));
  for (std::size_t r = 1; r < panels.size(); ++r)
    if (angle(r) <= angle(r - 1))
      found.push_back("rank " + std::to_string(r) + " is not clockwise after rank " +
                      std::to_string(r - 1));
  const std::vector<ArrowLayout>& arrows = layout.arrows;
  for (std::size_t i = 0; i < arrows.size(); ++i) {
    const std::string name =
        "the arrow " + std::to_string(arrows[i].src) + "->" + std::to_string(arrows[i].dst);
    for (std::size_t j = i + 1; j < arrows.size(); ++j)
      if (segments_cross(arrows[i].from, arrows[i].to, arrows[j].from, arrows[j].to))
        found.push_back(name + " crosses the arrow " + std::to_string(arrows[j].src) + "->" +
                        std::to_string(arrows[j].dst));
    for (const PanelLayout& panel : panels)
      if (panel.rank != arrows[i].src && panel.rank != arrows[i].dst &&
          panel.box.grown(-1).crossed_by(arrows[i].from, arrows[i].to))
        found.push_back(name + " crosses the box of rank " + std::to_string(panel.rank));
    if (layout.overview && layout.focus_box.box.grown(-1).crossed_by(arrows[i].from, arrows[i].to))
      found.push_back(name + " crosses the focus box");
    if (view == nullptr) continue;
    // Its label, where it carries data: not far from it (a label too wide
    // for the gap between two boxes goes above or below them), and no other
    // arrow plainly nearer (by more than a label's height).
    const auto label_of = std::find_if(layout.labels.begin(), layout.labels.end(),
                                       [&](const LabelLayout& l) { return l.arrow == int(i); });
    if (label_of == layout.labels.end()) {
      if (!view->arrows.at(i).empty) found.push_back(name + " has no label");
      continue;
    }
    const Rect& label = label_of->box;
    const float own = distance_to_box(label, arrows[i]);
    if (own > 150)
      found.push_back("the label '" + label_of->text.text + "' floats " +
                      std::to_string(static_cast<int>(own)) + " px from " + name);
    for (std::size_t j = 0; j < arrows.size(); ++j)
      if (j != i && distance_to_box(label, arrows[j]) + label.height() < own)
        found.push_back("the label '" + label_of->text.text + "' is nearer another arrow than " +
                        name);
  }
  return found;
}

}  // namespace

TEST_CASE("a ring of 8 or 16 ranks is a ring: arrows cross nothing, labels beside them") {
  // Issue 25: at 8 and 16 ranks the ring was drawn as a grid, with
  // wrap-around arrows that crossed and labels that floated. Issue 34: so
  // were ddp_step and horovod_step at 16 ranks, ring arrows cutting across
  // other ranks' boxes.
  // Where labels go is checked with the window's own fonts: the made-up
  // metrics' "ui" font is a third wider than DejaVu Sans, and a ring's middle
  // has no room for 16 labels that wide beside their arrows.
  const std::vector<LayoutFonts> all_fonts = fonts_to_try();
  for (std::size_t f = 0; f < all_fonts.size(); ++f) {
    const LayoutFonts& fonts = all_fonts[f];
    const bool real_fonts = f > 0;
    for (const auto& [scenario, ranks] : {std::pair<std::string, int>{"ring_allreduce", 8},
                                          {"ring_allreduce", 16},
                                          {"all_reduce", 8},
                                          {"all_reduce", 16},
                                          {"reduce_scatter", 16},
                                          {"all_gather", 8},
                                          {"ddp_step", 8},
                                          {"ddp_step", 16},
                                          {"horovod_step", 16}}) {
      GuiState state = make_state(scenario, ranks);
      REQUIRE(state.settings.ranks == ranks);
      // Every frame at 8 ranks (every other of a training step's); every
      // third at 16 (30 frames, each laid out many times over before the
      // ring fits), every fifth of a training step's.
      const int every = (ranks > 8 ? 3 : 1) + (is_training_step(scenario) ? ranks / 8 : 0);
      for (int frame = 1; frame < frame_count(state); frame += every) {
        apply(state, JumpTo{frame});
        const FrameView view = build_frame(state);
        for (const Display& display : {kDisplays[1], kDisplays[2]}) {
          for (const Vec2& canvas : canvases_of(display)) {
            const RanksLayout layout = layout_ranks(view, canvas, fonts);
            CAPTURE(scenario);
            CAPTURE(ranks);
            CAPTURE(frame);
            CAPTURE(display.width);
            CAPTURE(layout.detail);
            std::vector<std::string> found = ring_problems(layout, real_fonts ? &view : nullptr);
            const std::vector<std::string> more = problems(layout, view.ranks.size());
            found.insert(found.end(), more.begin(), more.end());
            if (!found.empty())
              FAIL_CHECK(found.front() << " (and " << found.size() - 1 << " more)");
            // At 8 ranks every cell a rank's input reached says whose it is
            // (but a chip's: its rank's focus box says it).
            if (ranks > 8) continue;
            for (const PanelLayout* panel : all_boxes(layout))
              for (const CellItem& cell : panel->cells)
                if (!cell.ranks.empty() && !panel->chip)
                  CHECK_MESSAGE(!cell.label.text.empty(), "rank " << panel->rank);
          }
        }
      }
    }
  }
}

TEST_CASE("the checks above catch a crossing arrow, a floating label and a label out of its cell") {
  const LayoutFonts fonts{uniform_metrics(17, 0.62f), uniform_metrics(17, 0.602f)};
  GuiState state = make_state("ring_allreduce", 8);
  apply(state, JumpTo{3});
  const FrameView view = build_frame(state);
  const RanksLayout good = layout_ranks(view, canvases_of(kDisplays[1]).front(), fonts);
  REQUIRE(ring_problems(good, &view).empty());
  REQUIRE(problems(good, view.ranks.size()).empty());
  RanksLayout crossing = good;  // the arrow 7->0 drawn to rank 3 instead
  crossing.arrows.back().to = crossing.panels[3].box.center();
  CHECK_FALSE(ring_problems(crossing, &view).empty());
  RanksLayout floating = good;
  floating.labels[0].box = Rect::at(floating.panels[4].box.center(),
                                    floating.labels[0].box.max - floating.labels[0].box.min);
  CHECK_FALSE(ring_problems(floating, &view).empty());
  RanksLayout grid = good;
  grid.arrangement = "grid";
  CHECK_FALSE(ring_problems(grid, &view).empty());
  RanksLayout label_out = good;
  REQUIRE_FALSE(label_out.panels[0].cells.empty());
  CellItem& cell = label_out.panels[0].cells[0];
  REQUIRE_FALSE(cell.label.text.empty());
  cell.label.at.y = cell.box.max.y - 2;
  CHECK_FALSE(problems(label_out, view.ranks.size()).empty());
}

// ---- the palette ---------------------------------------------------------------

namespace {

struct Lab {
  double l, a, b;
};

// sRGB (D65) to CIELAB.
Lab lab_of(Rgb rgb) {
  auto linear = [](std::uint8_t v) {
    const double u = v / 255.0;
    return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
  };
  const double r = linear(rgb.r), g = linear(rgb.g), b = linear(rgb.b);
  const double x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
  const double z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
  auto f = [](double t) {
    return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116;
  };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

// CIEDE2000 (Sharma, Wu, Dalal 2005).
double ciede2000(Lab p, Lab q) {
  const double pi = 3.14159265358979323846;
  auto rad = [&](double deg) { return deg * pi / 180; };
  const double c1 = std::hypot(p.a, p.b), c2 = std::hypot(q.a, q.b);
  const double c_bar7 = std::pow((c1 + c2) / 2, 7);
  const double g = 0.5 * (1 - std::sqrt(c_bar7 / (c_bar7 + std::pow(25.0, 7))));
  const double a1 = (1 + g) * p.a, a2 = (1 + g) * q.a;
  const double c1p = std::hypot(a1, p.b), c2p = std::hypot(a2, q.b);
  auto hue = [&](double b, double a) {
    if (a == 0 && b == 0) return 0.0;
    const double h = std::atan2(b, a) * 180 / pi;
    return h < 0 ? h + 360 : h;
  };
  const double h1 = hue(p.b, a1), h2 = hue(q.b, a2);
  double dh = 0;
  if (c1p * c2p != 0) {
    dh = h2 - h1;
    if (dh > 180) dh -= 360;
    if (dh < -180) dh += 360;
  }
  const double dl = q.l - p.l, dc = c2p - c1p;
  const double dhh = 2 * std::sqrt(c1p * c2p) * std::sin(rad(dh / 2));
  const double l_bar = (p.l + q.l) / 2, c_bar = (c1p + c2p) / 2;
  double h_bar = h1 + h2;
  if (c1p * c2p != 0) {
    if (std::fabs(h1 - h2) <= 180)
      h_bar = (h1 + h2) / 2;
    else
      h_bar = h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2;
  }
  const double t = 1 - 0.17 * std::cos(rad(h_bar - 30)) + 0.24 * std::cos(rad(2 * h_bar)) +
                   0.32 * std::cos(rad(3 * h_bar + 6)) - 0.20 * std::cos(rad(4 * h_bar - 63));
  const double theta = 30 * std::exp(-std::pow((h_bar - 275) / 25, 2));
  const double c_bar_p7 = std::pow(c_bar, 7);
  const double rc = 2 * std::sqrt(c_bar_p7 / (c_bar_p7 + std::pow(25.0, 7)));
  const double sl = 1 + 0.015 * std::pow(l_bar - 50, 2) / std::sqrt(20 + std::pow(l_bar - 50, 2));
  const double sc = 1 + 0.045 * c_bar, sh = 1 + 0.015 * c_bar * t;
  const double rt = -std::sin(rad(2 * theta)) * rc;
  return std::sqrt(std::pow(dl / sl, 2) + std::pow(dc / sc, 2) + std::pow(dhh / sh, 2) +
                   rt * (dc / sc) * (dhh / sh));
}

}  // namespace

TEST_CASE("16 ranks can be told apart: their colors are far apart in CIEDE2000") {
  // The formula, on pairs of Sharma, Wu and Dalal's published test data.
  CHECK(ciede2000({50, 2.6772, -79.7751}, {50, 0, -82.7485}) ==
        doctest::Approx(2.0425).epsilon(1e-4));
  CHECK(ciede2000({50, -1.3802, -84.2814}, {50, 0, -82.7485}) ==
        doctest::Approx(1.0000).epsilon(1e-4));
  CHECK(ciede2000({50, 2.5, 0}, {73, 25, -18}) == doctest::Approx(27.1492).epsilon(1e-4));
  CHECK(ciede2000({60.2574, -34.0099, 36.2677}, {60.4626, -34.1751, 39.4387}) ==
        doctest::Approx(1.2644).epsilon(1e-4));
  // Issue 25: "16 colours are hard to tell apart"; the old palette's
  // closest pair was 14.4 apart. A difference of 20 is plain at a glance.
  double closest = 1e9;
  for (int i = 0; i < kRankColorCount; ++i)
    for (int j = i + 1; j < kRankColorCount; ++j) {
      const double d = ciede2000(lab_of(kRankRgb[i]), lab_of(kRankRgb[j]));
      CAPTURE(i);
      CAPTURE(j);
      CHECK(d >= 20.0);
      closest = std::min(closest, d);
    }
  MESSAGE("the closest two rank colors are " << closest << " apart (CIEDE2000)");
  // Each stands out from what it is drawn on: the box, an empty cell, the
  // backing of a cell's value.
  for (int i = 0; i < kRankColorCount; ++i)
    for (Rgb under : {kPanelRgb, kMissingRgb, kCellLabelRgb}) {
      CAPTURE(i);
      CHECK(ciede2000(lab_of(kRankRgb[i]), lab_of(under)) >= 30.0);
    }
}
