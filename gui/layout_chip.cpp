#include "gui/layout_chip.hpp"

#include <algorithm>

#include "gui/layout_box.hpp"

namespace ringlab::gui {

namespace {

constexpr float kPad = 6;         // inside a chip
constexpr float kSwatch = 12;     // the rank's color, before the title
constexpr float kLeastCellW = 4;  // narrower, a stripe of a cell's colors would not show
constexpr float kMostCellW = 14;
constexpr float kCellGap = 1;    // between small cells of a buffer
constexpr float kBufferGap = 3;  // between buffers

bool shown(const BufferView& buffer) {
  return buffer.primary || !buffer.scratch || buffer.changed || buffer.sent;
}

// The rows of small cells of one buffer from `top`; returns where they end.
float add_strip(PanelLayout& chip, const BufferView& buffer, int index, float top, float inner,
                float cell_h) {
  const auto n = static_cast<int>(buffer.cells.size());
  const int per_row =
      std::clamp(static_cast<int>((inner + kCellGap) / (kLeastCellW + kCellGap)), 1, n);
  const float cell_w = std::min(kMostCellW, (inner + kCellGap) / per_row - kCellGap);
  float y = top;
  for (int first = 0; first < n; first += per_row) {
    for (int i = first; i < std::min(n, first + per_row); ++i) {
      CellItem cell;
      cell.box = Rect::at({kPad + static_cast<float>(i - first) * (cell_w + kCellGap), y},
                          {cell_w, cell_h});
      cell.ranks = buffer.cells[static_cast<std::size_t>(i)].provenance.ranks();
      cell.outlined = buffer.scratch;
      cell.buffer = index;
      chip.cells.push_back(std::move(cell));
    }
    y += cell_h + kCellGap;
  }
  return y - kCellGap;
}

PanelLayout build_chip(const RankPanel& panel, Vec2 size, const LayoutFonts& fonts) {
  const float width = size.x;
  PanelLayout chip;
  chip.rank = panel.rank;
  chip.chip = true;
  chip.active = panel.sends || panel.receives;
  const float inner = width - 2 * kPad;
  const float title = fonts.ui.size * 0.9f;
  chip.swatch = Rect::at({kPad, kPad + 1}, {kSwatch, kSwatch});
  const float title_x = kPad + kSwatch + 5;
  chip.texts.push_back(text_item(
      {title_x, kPad}, shorten_to_width(panel.role, fonts.ui, title, width - kPad - title_x),
      FontKind::Ui, title, Tone::Text, fonts));
  float y = kPad + title + 3;
  bool any = false;
  for (std::size_t b = 0; b < panel.buffers.size(); ++b) {
    const BufferView& buffer = panel.buffers[b];
    if (!shown(buffer) || buffer.cells.empty()) continue;
    y = add_strip(chip, buffer, static_cast<int>(b), y + (any ? kBufferGap : 0.0f), inner, size.y);
    any = true;
  }
  chip.box = Rect::at({0, 0}, {width, (any ? y : y - 3) + kPad - 1});
  return chip;
}

}  // namespace

std::vector<PanelLayout> build_chips(const FrameView& view, Vec2 cell, const LayoutFonts& fonts) {
  std::vector<PanelLayout> chips;
  for (const RankPanel& panel : view.ranks) chips.push_back(build_chip(panel, cell, fonts));
  return chips;
}

}  // namespace ringlab::gui
