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
  float line_size = 0;   // the article's line
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
  style.cell_text = std::min(fonts.mono.size * detail.cell_text_scale, style.cell_h - 4.0f);
  style.line_size = fonts.mono.size * detail.line_scale;
  style.label_size = style.line_size * 0.92f;
  style.line_limit = detail.line_limit;
  style.tensor_only = detail.tensor_only;
  style.keep = detail.keep;
  // A training step's cells already show its numbers, and its buffers are
  // long: their names stand alone.
  style.printed_labels = detail.printed_labels && !view.training;
  // Cells as wide as the widest value ("102.5") and no wider than needed to
  // share the row, wrapping into more rows when there are many.
  std::size_t most_cells = 1;
  float widest = 0;
  for (const RankPanel& panel : view.ranks)
    for (const BufferView& buffer : panel.buffers) {
      if (!kept(buffer, style.keep)) continue;
      most_cells = std::max(most_cells, buffer.cells.size());
      for (const CellView& cell : buffer.cells)
        widest = std::max(widest, fonts.mono.width(cell.text, style.cell_text));
    }
  const float inner = width - 2 * kPad;
  const float least = std::max(style.cell_h >= 30 ? 40.0f : 30.0f, widest + detail.cell_padding);
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

// One rank's box at the origin, `max_height` high at most.
PanelLayout build_panel(const RankPanel& panel, const BoxStyle& style, float max_height,
                        const LayoutFonts& fonts) {
  const float inner = style.width - 2 * kPad;
  std::vector<Unit> units;
  float y = kPad;
  auto add_text = [&](std::string text, FontKind font, float size, Tone tone, float after) {
    Unit unit;
    unit.top = y;
    unit.texts.push_back(text_item({kPad, y}, std::move(text), font, size, tone, fonts));
    unit.bottom = y + unit.texts.back().extent.y;
    y = unit.bottom + after;
    units.push_back(std::move(unit));
  };
  // Title: the rank's color, its role, what it does in this step.
  const float swatch_w = 12;
  std::string title = panel.role;
  if (panel.sends && panel.receives)
    title += "  (sends, receives)";
  else if (panel.sends)
    title += "  (sends)";
  else if (panel.receives)
    title += "  (receives)";
  {
    // A narrow box drops what the rank does: its bright border says it too.
    const float room = inner - swatch_w - 6;
    if (fonts.ui.width(title, fonts.ui.size) > room) title = panel.role;
    Unit unit;
    unit.top = y;
    unit.texts.push_back(text_item({kPad + swatch_w + 6, y},
                                   shorten_to_width(title, fonts.ui, fonts.ui.size, room),
                                   FontKind::Ui, fonts.ui.size, Tone::Text, fonts));
    unit.bottom = y + fonts.ui.size;
    y = unit.bottom + 4;
    units.push_back(std::move(unit));
  }
  // The article's line.
  std::string line = panel.line;
  if (style.tensor_only) {
    const std::size_t tensor = std::min(line.find("tensor("), line.find('['));
    if (tensor != std::string::npos) line = line.substr(tensor);
  }
  add_text(fitted_lines(line, fonts.mono, style.line_size, inner, style.line_limit), FontKind::Mono,
           style.line_size, Tone::Text, 5);
  int folded = 0;
  for (const BufferView& buffer : panel.buffers) {
    if (!kept(buffer, style.keep)) {
      ++folded;
      continue;
    }
    if (!buffer.primary) {
      std::string label = buffer.label + (buffer.changed ? "  (written now)" : "") + ":";
      if (style.printed_labels && !buffer.scratch) label += " " + buffer.printed;
      add_text(fitted_lines(label, fonts.mono, style.label_size, inner, style.line_limit),
               FontKind::Mono, style.label_size, Tone::Dim, 2);
    }
    const int per_row =
        std::max(1, static_cast<int>((inner + kCellGap) / (style.cell_w + kCellGap)));
    const int n = static_cast<int>(buffer.cells.size());
    for (int first = 0; first < n; first += per_row) {
      Unit unit;
      unit.top = y;
      for (int i = first; i < std::min(n, first + per_row); ++i) {
        const CellView& cell = buffer.cells[static_cast<std::size_t>(i)];
        CellItem item;
        item.box = Rect::at({kPad + static_cast<float>(i - first) * (style.cell_w + kCellGap), y},
                            {style.cell_w, style.cell_h});
        item.ranks = cell.provenance.ranks();
        item.outlined = buffer.scratch;
        // A value wider than its cell is drawn smaller.
        float size = style.cell_text;
        const float natural = fonts.mono.width(cell.text, size);
        if (natural > style.cell_w - 6) size *= (style.cell_w - 6) / natural;
        item.value = text_item({}, cell.text, FontKind::Mono, size, Tone::Text, fonts);
        item.value.at = item.box.center() - item.value.extent * 0.5f;
        unit.cells.push_back(std::move(item));
      }
      unit.bottom = y + style.cell_h;
      y = unit.bottom + kCellGap;
      units.push_back(std::move(unit));
    }
  }
  if (folded > 0)
    add_text(shorten_to_width(
                 "+ " + std::to_string(folded) + (folded == 1 ? " idle buffer" : " idle buffers"),
                 fonts.mono, style.label_size, inner),
             FontKind::Mono, style.label_size, Tone::Dim, 2);

  PanelLayout layout;
  layout.rank = panel.rank;
  layout.active = panel.sends || panel.receives;
  layout.swatch = Rect::at({kPad, kPad + 2}, {swatch_w, swatch_w});
  float height = y + kPad - 3;
  std::size_t keep_units = units.size();
  if (height > max_height) {
    // Keep what fits above a "..." line.
    layout.cut = true;
    const float ellipsis_h = style.label_size;
    keep_units = 0;
    while (keep_units < units.size() &&
           units[keep_units].bottom + 2 + ellipsis_h + kPad <= max_height)
      ++keep_units;
    height = max_height;
  }
  for (std::size_t u = 0; u < keep_units; ++u) {
    for (TextItem& text : units[u].texts) layout.texts.push_back(std::move(text));
    for (CellItem& cell : units[u].cells) layout.cells.push_back(std::move(cell));
  }
  if (layout.cut) {
    const float at = keep_units > 0 ? units[keep_units - 1].bottom + 2 : kPad;
    if (at + style.label_size + kPad <= max_height)
      layout.texts.push_back(
          text_item({kPad, at}, "...", FontKind::Mono, style.label_size, Tone::Dim, fonts));
  }
  if (keep_units == 0) layout.swatch = {};
  layout.box = Rect::at({0, 0}, {style.width, height});
  return layout;
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
  }
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
