#include "gui/layout_box.hpp"

#include <algorithm>

namespace ringlab::gui {

TextItem text_item(Vec2 at, std::string text, FontKind font, float size, Tone tone,
                   const LayoutFonts& fonts) {
  TextItem item{at, std::move(text), font, size, tone, {}};
  item.extent = (font == FontKind::Ui ? fonts.ui : fonts.mono).measure(item.text, size);
  return item;
}

namespace {

constexpr float kPad = 7;      // inside a box
constexpr float kCellGap = 3;  // between cells

bool touched(const BufferView& buffer) { return buffer.changed || buffer.sent; }

bool kept(const BufferView& buffer, Keep keep) {
  switch (keep) {
    case Keep::All:
      return true;
    case Keep::UserAndTouched:
      return buffer.primary || !buffer.scratch || touched(buffer);
    case Keep::PrimaryAndTouched:
      return buffer.primary || touched(buffer);
  }
  return true;
}

// Sizes shared by every box of one layout attempt.
struct BoxStyle {
  float width = 0;
  float cell_w = 0;
  float cell_h = 0;
  float cell_text = 0;   // size of a cell's value
  float cell_label = 0;  // size of a cell's ranks label
  float line_size = 0;   // the article's line (0: none)
  float label_size = 0;  // a buffer's name line
  int line_limit = 0;
  bool tensor_only = false;
  Keep keep = Keep::All;
  bool printed_labels = true;
};

BoxStyle box_style(const FrameView& view, float width, const Detail& detail,
                   const LayoutFonts& fonts) {
  BoxStyle style;
  const bool many = view.ranks.size() > 8;
  style.width = width;
  style.cell_h = many ? detail.cell_height_many : detail.cell_height;
  style.cell_label = std::max(7.0f, fonts.mono.size * detail.label_scale);
  // The value above the label, a pixel apart, each a pixel from the edge.
  style.cell_text =
      std::min(fonts.mono.size * detail.cell_text_scale, style.cell_h - style.cell_label - 4.0f);
  style.line_size = fonts.mono.size * detail.line_scale;
  style.label_size = std::max(fonts.mono.size * 0.72f, style.line_size * 0.92f);
  style.line_limit = detail.line_limit;
  style.tensor_only = detail.tensor_only;
  style.keep = detail.keep;
  // A training step's cells already show its numbers, and its buffers are
  // long: their names stand alone.
  style.printed_labels = detail.printed_labels && !view.training;
  // Cells as wide as the widest value ("102.5") or label ("0-2,5") and no
  // wider than needed to share the row, wrapping into more rows when there
  // are many.
  std::size_t most_cells = 1;
  float widest = 0;
  for (const RankPanel& panel : view.ranks)
    for (const BufferView& buffer : panel.buffers) {
      if (!kept(buffer, style.keep)) continue;
      most_cells = std::max(most_cells, buffer.cells.size());
      for (const CellView& cell : buffer.cells)
        widest =
            std::max({widest, fonts.mono.width(cell.text, style.cell_text),
                      detail.label_widens ? fonts.mono.width(cell.ranks, style.cell_label) : 0.0f});
    }
  const float inner = width - 2 * kPad;
  const float least = std::max(detail.least_cell_width, widest + detail.cell_padding);
  style.cell_w =
      std::clamp(inner / static_cast<float>(most_cells) - kCellGap, least, std::max(least, 96.0f));
  style.cell_w = std::min(style.cell_w, inner);
  return style;
}

// A horizontal strip of a box: one text, or one row of cells. A box that is
// too short keeps its first units and says "...".
struct Unit {
  float top = 0;
  float bottom = 0;
  std::vector<TextItem> texts;
  std::vector<CellItem> cells;
};

// Wrapped (between elements) and each line shortened to `width`; at most
// `limit` lines (0: all), the last saying "..." when some were left out.
std::string fitted_lines(const std::string& text, const FontMetrics& font, float size, float width,
                         int limit) {
  const std::string wrapped = wrap_between_elements(text, font, size, width);
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin <= wrapped.size()) {
    const std::size_t end = std::min(wrapped.find('\n', begin), wrapped.size());
    lines.push_back(wrapped.substr(begin, end - begin));
    begin = end + 1;
  }
  const bool cut = limit > 0 && static_cast<int>(lines.size()) > limit;
  if (cut) lines.resize(static_cast<std::size_t>(limit));
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (cut && i + 1 == lines.size()) line += "...";
    out += (i ? "\n" : "") + shorten_to_width(line, font, size, width);
  }
  return out;
}

// A cell at `box`: its value centered above its ranks label, the label along
// the bottom (left out when the cell is too narrow for it).
CellItem cell_item(const CellView& cell, Rect box, bool scratch, const BoxStyle& style,
                   const LayoutFonts& fonts) {
  CellItem item;
  item.box = box;
  item.ranks = cell.provenance.ranks();
  item.outlined = scratch;
  const float room = box.width() - 2;
  if (!cell.ranks.empty() && fonts.mono.width(cell.ranks, style.cell_label) <= room) {
    item.label = text_item({}, cell.ranks, FontKind::Mono, style.cell_label, Tone::OnColor, fonts);
    item.label.at = {box.center().x - item.label.extent.x * 0.5f,
                     box.max.y - 1 - item.label.extent.y};
  }
  // A value wider than its cell is drawn smaller.
  float size = style.cell_text;
  const float natural = fonts.mono.width(cell.text, size);
  if (natural > box.width() - 6) size *= (box.width() - 6) / natural;
  item.value = text_item({}, cell.text, FontKind::Mono, size, Tone::Text, fonts);
  const float above = box.max.y - 1 - style.cell_label - 1;  // the label's band starts here
  item.value.at = {box.center().x - item.value.extent.x * 0.5f,
                   (box.min.y + above) * 0.5f - item.value.extent.y * 0.5f};
  return item;
}

// Builds a box's units top to bottom from y = kPad; returns where they end.
class BoxBuilder {
 public:
  BoxBuilder(const BoxStyle& style, const LayoutFonts& fonts) : style_(style), fonts_(fonts) {}

  void text(std::string text, FontKind font, float size, Tone tone, float after) {
    Unit unit;
    unit.top = y_;
    unit.texts.push_back(text_item({kPad, y_}, std::move(text), font, size, tone, fonts_));
    unit.bottom = y_ + unit.texts.back().extent.y;
    y_ = unit.bottom + after;
    units_.push_back(std::move(unit));
  }

  // Title: the rank's color (a swatch left of it), its role, what it does in
  // this step; a narrow box drops what it does (its bright border says it too).
  void title(const RankPanel& panel, float swatch_w) {
    const float room = inner() - swatch_w - 6;
    std::string title = panel.role;
    if (panel.sends || panel.receives)
      title += panel.sends && panel.receives ? "  (sends, receives)"
               : panel.sends                 ? "  (sends)"
                                             : "  (receives)";
    if (fonts_.ui.width(title, fonts_.ui.size) > room) title = panel.role;
    Unit unit;
    unit.top = y_;
    unit.texts.push_back(text_item({kPad + swatch_w + 6, y_},
                                   shorten_to_width(title, fonts_.ui, fonts_.ui.size, room),
                                   FontKind::Ui, fonts_.ui.size, Tone::Text, fonts_));
    unit.bottom = y_ + fonts_.ui.size;
    y_ = unit.bottom + 4;
    units_.push_back(std::move(unit));
  }

  // One buffer (the rank's `index`th): its name line (not for the rank's
  // tensor), then its cells in rows.
  void buffer(const BufferView& buffer, int index) {
    if (!buffer.primary) {
      std::string label = buffer.label + (buffer.changed ? "  (written now)" : "") + ":";
      if (style_.printed_labels && !buffer.scratch) label += " " + buffer.printed;
      text(fitted_lines(label, fonts_.mono, style_.label_size, inner(), style_.line_limit),
           FontKind::Mono, style_.label_size, Tone::Dim, 2);
    }
    const int per_row =
        std::max(1, static_cast<int>((inner() + kCellGap) / (style_.cell_w + kCellGap)));
    const int n = static_cast<int>(buffer.cells.size());
    for (int first = 0; first < n; first += per_row) {
      Unit unit;
      unit.top = y_;
      for (int i = first; i < std::min(n, first + per_row); ++i) {
        const Rect box =
            Rect::at({kPad + static_cast<float>(i - first) * (style_.cell_w + kCellGap), y_},
                     {style_.cell_w, style_.cell_h});
        unit.cells.push_back(cell_item(buffer.cells[static_cast<std::size_t>(i)], box,
                                       buffer.scratch, style_, fonts_));
        unit.cells.back().buffer = index;
      }
      unit.bottom = y_ + style_.cell_h;
      y_ = unit.bottom + kCellGap;
      units_.push_back(std::move(unit));
    }
  }

  float inner() const { return style_.width - 2 * kPad; }

  // The box, `max_height` high at most: what fits of it when the units are
  // taller, and "..." at the right end of the title line to say so.
  PanelLayout finish(PanelLayout layout, float max_height) {
    float height = y_ + kPad - 3;
    std::size_t keep_units = units_.size();
    if (height > max_height) {
      layout.cut = true;
      keep_units = 0;
      while (keep_units < units_.size() && units_[keep_units].bottom + kPad <= max_height)
        ++keep_units;
      height = max_height;
    }
    if (layout.cut && keep_units > 0) {
      // The title gives way to the "...".
      TextItem& title = units_.front().texts.front();
      const TextItem dots = text_item({}, "...", FontKind::Ui, fonts_.ui.size, Tone::Dim, fonts_);
      const float right = style_.width - kPad;
      title = text_item(title.at,
                        shorten_to_width(title.text, fonts_.ui, fonts_.ui.size,
                                         right - dots.extent.x - 4 - title.at.x),
                        FontKind::Ui, fonts_.ui.size, Tone::Text, fonts_);
      units_.front().texts.push_back(dots);
      units_.front().texts.back().at = {right - dots.extent.x, title.at.y};
    }
    for (std::size_t u = 0; u < keep_units; ++u) {
      for (TextItem& text : units_[u].texts) layout.texts.push_back(std::move(text));
      for (CellItem& cell : units_[u].cells) layout.cells.push_back(std::move(cell));
    }
    if (keep_units == 0) layout.swatch = {};
    layout.box = Rect::at({0, 0}, {style_.width, height});
    return layout;
  }

 private:
  const BoxStyle& style_;
  const LayoutFonts& fonts_;
  std::vector<Unit> units_;
  float y_ = kPad;
};

// One rank's box at the origin, `max_height` high at most; `hint`, when
// given, goes under the title.
PanelLayout build_panel(const RankPanel& panel, const BoxStyle& style, float max_height,
                        const LayoutFonts& fonts, const std::string& hint = {}) {
  BoxBuilder box(style, fonts);
  const float swatch_w = 12;
  box.title(panel, swatch_w);
  if (!hint.empty())
    box.text(fitted_lines(hint, fonts.ui, fonts.ui.size * 0.8f, box.inner(), 2), FontKind::Ui,
             fonts.ui.size * 0.8f, Tone::Dim, 4);
  // The article's line (compact boxes leave it out: the cells show it).
  if (style.line_size > 0) {
    std::string line = panel.line;
    if (style.tensor_only) {
      const std::size_t tensor = std::min(line.find("tensor("), line.find('['));
      if (tensor != std::string::npos) line = line.substr(tensor);
    }
    box.text(fitted_lines(line, fonts.mono, style.line_size, box.inner(), style.line_limit),
             FontKind::Mono, style.line_size, Tone::Text, 5);
  }
  int folded = 0;
  for (std::size_t b = 0; b < panel.buffers.size(); ++b) {
    if (kept(panel.buffers[b], style.keep))
      box.buffer(panel.buffers[b], static_cast<int>(b));
    else
      ++folded;
  }
  if (folded > 0)
    box.text(shorten_to_width(
                 "+ " + std::to_string(folded) + (folded == 1 ? " idle buffer" : " idle buffers"),
                 fonts.mono, style.label_size, box.inner()),
             FontKind::Mono, style.label_size, Tone::Dim, 2);
  PanelLayout layout;
  layout.rank = panel.rank;
  layout.active = panel.sends || panel.receives;
  layout.swatch = Rect::at({kPad, kPad + 2}, {swatch_w, swatch_w});
  return box.finish(std::move(layout), max_height);
}

}  // namespace

void move_panel(PanelLayout& panel, Vec2 to) {
  const Vec2 by = to - panel.box.min;
  panel.box = {panel.box.min + by, panel.box.max + by};
  panel.swatch = {panel.swatch.min + by, panel.swatch.max + by};
  for (TextItem& text : panel.texts) text.at = text.at + by;
  for (CellItem& cell : panel.cells) {
    cell.box = {cell.box.min + by, cell.box.max + by};
    cell.value.at = cell.value.at + by;
    cell.label.at = cell.label.at + by;
  }
}

PanelLayout build_focus_box(const FrameView& view, int rank, float width, const Detail& detail,
                            float max_height, const std::string& hint, const LayoutFonts& fonts) {
  // Every buffer the rank's chip shows, at least.
  Detail whole = detail;
  if (whole.keep == Keep::PrimaryAndTouched) whole.keep = Keep::UserAndTouched;
  PanelLayout box = build_panel(view.ranks.at(static_cast<std::size_t>(rank)),
                                box_style(view, width, whole, fonts), max_height, fonts, hint);
  box.focus = true;
  return box;
}

bool readable(const std::vector<PanelLayout>& panels, const FrameView& view) {
  for (const PanelLayout& panel : panels) {
    // A box with none of its rank's cells (a training step's buffers, none
    // touched, all folded away) shows nothing of its data.
    const RankPanel& rank = view.ranks.at(static_cast<std::size_t>(panel.rank));
    const bool has_cells = std::any_of(rank.buffers.begin(), rank.buffers.end(),
                                       [](const BufferView& b) { return !b.cells.empty(); });
    if (has_cells && panel.cells.empty()) return false;
    for (const CellItem& cell : panel.cells)
      if ((!cell.value.text.empty() && cell.value.size < kLeastValuePx) ||
          (!cell.label.text.empty() && cell.label.size < kLeastLabelPx))
        return false;
  }
  return true;
}

std::vector<PanelLayout> build_panels(const FrameView& view, const std::vector<float>& widths,
                                      const Detail& detail, float max_height,
                                      const LayoutFonts& fonts) {
  std::vector<PanelLayout> panels;
  std::vector<std::pair<float, BoxStyle>> styles;  // one per width
  for (const RankPanel& panel : view.ranks) {
    const float w = widths[static_cast<std::size_t>(panel.rank)];
    auto style =
        std::find_if(styles.begin(), styles.end(), [&](const auto& s) { return s.first == w; });
    if (style == styles.end())
      style = styles.insert(styles.end(), {w, box_style(view, w, detail, fonts)});
    panels.push_back(build_panel(panel, style->second, max_height, fonts));
  }
  return panels;
}

}  // namespace ringlab::gui
