// What the GUI's layout tests check of a laid-out canvas (layout.hpp),
// shared by test_gui_layout.cpp and test_gui_readable.cpp: the window sizes
// and canvases they try, the fonts they measure with, and the checks, each a
// list of what is wrong (empty: nothing).
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/layout.hpp"

#ifdef RINGLAB_TEST_REAL_FONTS
#include "gui/fonts.hpp"
#include "imgui.h"
#endif

namespace ringlab::gui::test {

// Window sizes: the smallest supported, the default, a large one, and a tall
// narrow one.
struct Display {
  float width;
  float height;
};
inline constexpr Display kDisplays[] = {{1024, 640}, {1280, 800}, {1600, 1000}, {1024, 1366}};

// The canvases a display leaves (window_layout's side panel and log; above
// the canvas the controls, the title and a sentence of one to four lines).
inline std::vector<Vec2> canvases_of(Display display) {
  const WindowLayout window = window_layout({display.width, display.height});
  const float width = display.width - window.side_width - 20;
  std::vector<Vec2> canvases;
  for (float above : {110.0f, 190.0f})
    canvases.push_back({width, display.height - window.log_height - above});
  return canvases;
}

// Made-up metrics first: every glyph 0.6 em (DejaVu Sans Mono is 0.602), and
// a wide "ui" font at 0.75 em, so that nothing relies on narrow text; then,
// built with the GUI, the fonts the window loads.
inline std::vector<LayoutFonts> fonts_to_try() {
  std::vector<LayoutFonts> fonts;
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

// The window's own fonts where the GUI is built, else the made-up ones.
inline LayoutFonts window_fonts() { return fonts_to_try().back(); }

inline std::string text_of(const Rect& r) {
  char text[96];
  std::snprintf(text, sizeof text, "[%.1f,%.1f - %.1f,%.1f]", r.min.x, r.min.y, r.max.x, r.max.y);
  return text;
}

// Boxes on the canvas and apart; each box's texts and cells inside it, a
// cell's value and ranks label inside the cell and apart; labels on the
// canvas, their text on their backing.
inline std::vector<std::string> problems(const RanksLayout& layout, std::size_t ranks) {
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
      if (!cell.value.text.empty() && !cell.box.contains(cell.value.box()))
        found.push_back("the value '" + cell.value.text + "' leaves its cell in the " + name);
      if (!cell.label.text.empty() && !cell.box.contains(cell.label.box()))
        found.push_back("the ranks label '" + cell.label.text + "' " + text_of(cell.label.box()) +
                        " leaves its cell " + text_of(cell.box) + " in the " + name);
      if (!cell.label.text.empty() && cell.label.box().overlap_area(cell.value.box()) > 0)
        found.push_back("the ranks label '" + cell.label.text + "' covers the value '" +
                        cell.value.text + "' in the " + name);
    }
  }
  if (layout.overview) {
    const PanelLayout& box = layout.focus_box;
    const std::string name = "focus box " + text_of(box.box);
    if (box.rank != layout.focus) found.push_back(name + " shows another rank than the focus");
    if (!canvas.contains(box.box)) found.push_back(name + " leaves the canvas");
    for (const PanelLayout& panel : layout.panels)
      if (box.box.intersects(panel.box))
        found.push_back(name + " intersects the box of rank " + std::to_string(panel.rank));
    for (const TextItem& text : box.texts)
      if (!box.box.contains(text.box()))
        found.push_back("text '" + text.text + "' leaves the " + name);
    for (const CellItem& cell : box.cells)
      if (!box.box.contains(cell.box)) found.push_back("a cell leaves the " + name);
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

// ---- text that can be read ----------------------------------------------------

// A text on the canvas and the ranks it belongs to: a box's to its rank, an
// arrow's label to the two it joins.
struct PlacedText {
  Rect box;
  std::string text;
  int rank = -1;
  int other = -1;  // an arrow's second rank (-1: none)
  bool belongs_to(int r) const { return r == rank || r == other; }
};

// The boxes on the canvas: every rank's, and the overview's focus box.
inline std::vector<const PanelLayout*> all_boxes(const RanksLayout& layout) {
  std::vector<const PanelLayout*> boxes;
  for (const PanelLayout& panel : layout.panels) boxes.push_back(&panel);
  if (layout.overview) boxes.push_back(&layout.focus_box);
  return boxes;
}

inline std::vector<PlacedText> placed_texts(const RanksLayout& layout) {
  std::vector<PlacedText> texts;
  for (const PanelLayout* panel : all_boxes(layout)) {
    for (const TextItem& text : panel->texts)
      if (!text.text.empty()) texts.push_back({text.box(), text.text, panel->rank});
    for (const CellItem& cell : panel->cells) {
      if (!cell.value.text.empty())
        texts.push_back({cell.value.box(), cell.value.text, panel->rank});
      if (!cell.label.text.empty())
        texts.push_back({cell.label.box(), cell.label.text, panel->rank});
    }
  }
  for (const LabelLayout& label : layout.labels) {
    const ArrowLayout& arrow = layout.arrows.at(static_cast<std::size_t>(label.arrow));
    texts.push_back({label.box, label.text.text, arrow.src, arrow.dst});
  }
  return texts;
}

// No two texts overlap; no text lies on the box of a rank it does not belong
// to; an arrow's label covers no cell.
inline std::vector<std::string> overlapping_texts(const RanksLayout& layout) {
  std::vector<std::string> found;
  const std::vector<PlacedText> texts = placed_texts(layout);
  for (std::size_t a = 0; a < texts.size(); ++a) {
    const PlacedText& text = texts[a];
    for (std::size_t b = a + 1; b < texts.size(); ++b)
      if (text.box.overlap_area(texts[b].box) > 0)
        found.push_back("'" + text.text + "' " + text_of(text.box) + " overlaps '" + texts[b].text +
                        "' " + text_of(texts[b].box));
    for (const PanelLayout* panel : all_boxes(layout)) {
      if (!text.belongs_to(panel->rank) && text.box.overlap_area(panel->box) > 0)
        found.push_back("'" + text.text + "' " + text_of(text.box) + " lies on the box of rank " +
                        std::to_string(panel->rank) + " " + text_of(panel->box));
      if (text.other < 0) continue;
      for (const CellItem& cell : panel->cells)
        if (text.box.overlap_area(cell.box) > 0)
          found.push_back("the label '" + text.text + "' covers a cell of rank " +
                          std::to_string(panel->rank));
    }
  }
  return found;
}

// The least sizes, in pixels, at which a cell's value and its ranks label
// read at a glance (DejaVu Sans Mono: digits 5.4 px wide at 9 px).
inline constexpr float kLeastValuePx = 9.0f;
inline constexpr float kLeastLabelPx = 7.0f;

// Every value and ranks label a cell shows is at least the readable size,
// and a cell that shows no value where its rank's buffer has one is a chip's:
// its values are in the focus box, which shows every buffer of its rank that
// its chip does.
inline std::vector<std::string> unreadable_cells(const RanksLayout& layout, const FrameView& view) {
  std::vector<std::string> found;
  for (const PanelLayout* panel : all_boxes(layout))
    for (const CellItem& cell : panel->cells) {
      char size[32];
      if (!cell.value.text.empty() && cell.value.size < kLeastValuePx) {
        std::snprintf(size, sizeof size, "%.1f", cell.value.size);
        found.push_back("the value '" + cell.value.text + "' of rank " +
                        std::to_string(panel->rank) + " is " + size + " px");
      }
      if (!cell.label.text.empty() && cell.label.size < kLeastLabelPx) {
        std::snprintf(size, sizeof size, "%.1f", cell.label.size);
        found.push_back("the ranks label '" + cell.label.text + "' of rank " +
                        std::to_string(panel->rank) + " is " + size + " px");
      }
    }
  for (const PanelLayout& panel : layout.panels) {
    if (!panel.chip) continue;
    const std::string name = "rank " + std::to_string(panel.rank) + "'s chip";
    if (!layout.overview) {
      found.push_back(name + " shows no values, and there is no focus box");
      continue;
    }
    if (panel.rank != layout.focus) continue;
    for (const CellItem& cell : panel.cells) {
      const bool in_box =
          std::any_of(layout.focus_box.cells.begin(), layout.focus_box.cells.end(),
                      [&](const CellItem& shown) { return shown.buffer == cell.buffer; });
      if (!in_box)
        found.push_back(name + " shows " +
                        view.ranks[static_cast<std::size_t>(panel.rank)]
                            .buffers.at(static_cast<std::size_t>(cell.buffer))
                            .label +
                        ", which the focus box does not");
    }
  }
  return found;
}

// ---- what a step writes ---------------------------------------------------------

// Text without its spaces and line breaks (a heading may wrap).
inline std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != ' ' && c != '\n') out += c;
  return out;
}

// The box's heading of a buffer ("bucket 0 (net4, net3)  (written now): ..."),
// or nullptr.
inline const TextItem* heading_of(const PanelLayout& panel, const BufferView& buffer) {
  const std::string label = squeezed(buffer.label);
  for (const TextItem& text : panel.texts) {
    const std::string heading = squeezed(text.text);
    if (heading.rfind(label, 0) == 0 && heading.size() > label.size() &&
        (heading[label.size()] == '(' || heading[label.size()] == ':'))
      return &text;
  }
  return nullptr;
}

// Whether a cell starts right under the text (a heading's first row).
inline bool cells_under(const PanelLayout& panel, const TextItem& text) {
  for (const CellItem& cell : panel.cells)
    if (cell.box.min.y >= text.box().max.y - 0.5f && cell.box.min.y <= text.box().max.y + 8.0f)
      return true;
  return false;
}

// Every rank with data shows some of its cells, every buffer the step writes
// shows cells in its rank's box (or chip), no box is cut short, and a
// buffer's heading, where a box shows one, has its cells under it.
inline std::vector<std::string> hidden_data(const RanksLayout& layout, const FrameView& view) {
  std::vector<std::string> found;
  for (const PanelLayout* panel : all_boxes(layout)) {
    const RankPanel& rank = view.ranks.at(static_cast<std::size_t>(panel->rank));
    if (panel->cut) found.push_back(rank.role + "'s box is cut short");
    const bool has_cells = std::any_of(rank.buffers.begin(), rank.buffers.end(),
                                       [](const BufferView& b) { return !b.cells.empty(); });
    if (has_cells && panel->cells.empty())
      found.push_back(rank.role + "'s box shows none of its cells");
    for (std::size_t b = 0; b < rank.buffers.size(); ++b) {
      const BufferView& buffer = rank.buffers[b];
      if (buffer.cells.empty()) continue;
      const bool shown =
          std::any_of(panel->cells.begin(), panel->cells.end(),
                      [&](const CellItem& cell) { return cell.buffer == static_cast<int>(b); });
      if (buffer.changed && !shown)
        found.push_back(rank.role + "'s " + buffer.label +
                        ", written in this step, shows no cells");
      const TextItem* heading = buffer.primary ? nullptr : heading_of(*panel, buffer);
      if (heading != nullptr && !cells_under(*panel, *heading))
        found.push_back(rank.role + "'s " + buffer.label + " is a heading with no cells");
    }
  }
  return found;
}

}  // namespace ringlab::gui::test
