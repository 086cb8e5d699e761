// Arrangements, tried from the most telling picture to the most compact:
//   ring    collectives: rank 0 at the top, clockwise on an ellipse, as rings
//           are drawn; taken only while no two boxes come close
//   groups  ranks with roles (servers, workers): each role on rows of its own,
//           servers on top, with a band between them for the arrows' labels
//   grid    everything else: rows of equal columns
// Each is tried at falling levels of detail (see kDetails) until every box
// fits; when none does, the grid's slots cut the boxes short.
#include "gui/layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;      // between the canvas' edge and any box
constexpr float kPad = 7;         // inside a box
constexpr float kGap = 16;        // between boxes, at least
constexpr float kColumnGap = 30;  // between columns of rows: room for an arrow
constexpr float kCellGap = 3;     // between cells
constexpr float kMaxBoxWidth = 340;
constexpr float kMinBoxWidth = 150;
constexpr float kUnbounded = std::numeric_limits<float>::max();
constexpr float kPi = 3.14159265f;

// What a box shows at one level of detail.
enum class Keep { All, UserAndTouched, PrimaryAndTouched };
struct Detail {
  float cell_height;       // p <= 8
  float cell_height_many;  // p > 8
  Keep keep;
  bool printed_labels;    // the value printed after a non-primary buffer's name
  float line_scale;       // the article's line, in mono font sizes
  int line_limit;         // its lines at most (0: all)
  float cell_text_scale;  // a cell's value, in mono font sizes (at most)
  float cell_padding;     // a cell is this much wider than its widest value
  bool tensor_only;       // the article's line without "Rank 0 has data": the title says whose
};
constexpr Detail kDetails[] = {
    {30, 24, Keep::All, true, 0.9f, 0, 1.0f, 12, false},
    {30, 24, Keep::UserAndTouched, true, 0.9f, 0, 1.0f, 12, false},
    {24, 22, Keep::UserAndTouched, false, 0.9f, 0, 1.0f, 10, false},
    {22, 20, Keep::PrimaryAndTouched, false, 0.85f, 3, 0.85f, 8, false},
    {20, 18, Keep::PrimaryAndTouched, false, 0.8f, 2, 0.8f, 8, true},
};
constexpr int kDetailLevels = static_cast<int>(std::size(kDetails));

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
  style.printed_labels = detail.printed_labels;
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

TextItem text_item(Vec2 at, std::string text, FontKind font, float size, Tone tone,
                   const LayoutFonts& fonts) {
  TextItem item{at, std::move(text), font, size, tone, {}};
  item.extent = (font == FontKind::Ui ? fonts.ui : fonts.mono).measure(item.text, size);
  return item;
}

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

// Every rank's box, `width(rank)` wide.
template <typename WidthOf>
std::vector<PanelLayout> build_panels(const FrameView& view, WidthOf width, const Detail& detail,
                                      float max_height, const LayoutFonts& fonts) {
  std::vector<PanelLayout> panels;
  std::vector<std::pair<float, BoxStyle>> styles;  // one per width
  for (const RankPanel& panel : view.ranks) {
    const float w = width(panel.rank);
    auto style =
        std::find_if(styles.begin(), styles.end(), [&](const auto& s) { return s.first == w; });
    if (style == styles.end())
      style = styles.insert(styles.end(), {w, box_style(view, w, detail, fonts)});
    panels.push_back(build_panel(panel, style->second, max_height, fonts));
  }
  return panels;
}

bool apart(const std::vector<PanelLayout>& panels) {
  for (std::size_t a = 0; a < panels.size(); ++a)
    for (std::size_t b = a + 1; b < panels.size(); ++b)
      if (panels[a].box.grown(kGap / 2).intersects(panels[b].box.grown(kGap / 2))) return false;
  return true;
}

// ---- ring -------------------------------------------------------------------

float ring_width(std::size_t ranks, Vec2 canvas) {
  const float divisor = ranks <= 4 ? 3.6f : ranks <= 8 ? 4.2f : 5.6f;
  return std::min(std::clamp(canvas.x / divisor, kMinBoxWidth, 280.0f), canvas.x - 2 * kMargin);
}

// Places the boxes on the ellipse; false when two would come close.
bool place_ring(std::vector<PanelLayout>& panels, Vec2 canvas) {
  const int p = static_cast<int>(panels.size());
  float tallest = 0;
  for (const PanelLayout& panel : panels) tallest = std::max(tallest, panel.box.height());
  const float width = panels.front().box.width();
  if (tallest > canvas.y - 2 * kMargin) return false;
  const Vec2 center = canvas * 0.5f;
  const float rx = std::max(0.0f, canvas.x * 0.5f - kMargin - width * 0.5f);
  const float ry = std::max(0.0f, canvas.y * 0.5f - kMargin - tallest * 0.5f);
  for (int r = 0; r < p; ++r) {
    const float angle = -kPi / 2 + 2 * kPi * static_cast<float>(r) / static_cast<float>(p);
    const Vec2 c = center + Vec2{rx * std::cos(angle), ry * std::sin(angle)};
    move_panel(panels[r], c - Vec2{width * 0.5f, panels[r].box.height() * 0.5f});
  }
  return apart(panels);
}

// ---- groups and grid ------------------------------------------------------------

// Ranks by role: "server 0", "server 1" | "worker 0", ... in order of first
// appearance; one group when every rank is a plain "rank N".
std::vector<std::vector<int>> role_groups(const FrameView& view) {
  std::vector<std::string> words;
  std::vector<std::vector<int>> groups;
  for (const RankPanel& panel : view.ranks) {
    const std::string word = panel.role.substr(0, panel.role.rfind(' '));
    const auto at = std::find(words.begin(), words.end(), word);
    if (at == words.end()) {
      words.push_back(word);
      groups.push_back({panel.rank});
    } else {
      groups[static_cast<std::size_t>(at - words.begin())].push_back(panel.rank);
    }
  }
  return groups;
}

// One way to put the groups on rows: each group has its own number of
// columns, and every box of a group is as wide as its columns allow.
struct Rows {
  std::vector<int> columns;            // per group
  std::vector<float> widths;           // per group
  std::vector<std::vector<int>> rows;  // ranks, left to right
  std::vector<int> group_of_row;
  float width_of(int rank, const std::vector<std::vector<int>>& groups) const {
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (std::find(groups[g].begin(), groups[g].end(), rank) != groups[g].end()) return widths[g];
    return widths.front();
  }
};

float column_width(int columns, Vec2 canvas) {
  const float usable = canvas.x - 2 * kMargin;
  return std::min(kMaxBoxWidth, (usable - static_cast<float>(columns - 1) * kColumnGap) /
                                    static_cast<float>(columns));
}

Rows rows_for(const std::vector<std::vector<int>>& groups, const std::vector<int>& columns,
              Vec2 canvas) {
  Rows rows;
  rows.columns = columns;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto per_row = static_cast<std::size_t>(columns[g]);
    rows.widths.push_back(column_width(columns[g], canvas));
    const std::vector<int>& group = groups[g];
    for (std::size_t first = 0; first < group.size(); first += per_row) {
      rows.rows.emplace_back(
          group.begin() + static_cast<std::ptrdiff_t>(first),
          group.begin() + static_cast<std::ptrdiff_t>(std::min(group.size(), first + per_row)));
      rows.group_of_row.push_back(static_cast<int>(g));
    }
  }
  return rows;
}

// Every choice of columns per group whose boxes are wide enough (or one
// column): a group of n on r rows takes ceil(n / r) columns.
std::vector<Rows> all_shapes(const std::vector<std::vector<int>>& groups, Vec2 canvas) {
  std::vector<std::vector<int>> choices;  // per group
  for (const std::vector<int>& group : groups) {
    const int n = static_cast<int>(group.size());
    std::vector<int> columns;
    for (int r = 1; r <= n; ++r) {
      const int c = (n + r - 1) / r;
      if ((c == 1 || column_width(c, canvas) >= kMinBoxWidth) &&
          std::find(columns.begin(), columns.end(), c) == columns.end())
        columns.push_back(c);
    }
    choices.push_back(std::move(columns));
  }
  std::vector<Rows> shapes;
  std::vector<std::size_t> pick(groups.size(), 0);
  while (shapes.size() < 256) {
    std::vector<int> columns;
    for (std::size_t g = 0; g < groups.size(); ++g) columns.push_back(choices[g][pick[g]]);
    shapes.push_back(rows_for(groups, columns, canvas));
    std::size_t g = 0;
    while (g < groups.size() && ++pick[g] == choices[g].size()) pick[g++] = 0;
    if (g == groups.size()) break;
  }
  return shapes;
}

// The least gap above each row: groups are kept further apart, so that the
// labels of the arrows between them fit in the band.
std::vector<float> least_gaps(const Rows& rows, float group_gap) {
  std::vector<float> gaps(rows.rows.size(), 0.0f);
  for (std::size_t i = 1; i < rows.rows.size(); ++i)
    gaps[i] = rows.group_of_row[i] != rows.group_of_row[i - 1] ? group_gap : kGap;
  return gaps;
}

// How well slots of this shape hold a box (lower is better): boxes read best
// about 1.6 times as wide as tall, and empty slots waste room.
float shape_penalty(const Rows& rows, const std::vector<std::vector<int>>& groups, Vec2 canvas) {
  const float slot_h = (canvas.y - 2 * kMargin) / static_cast<float>(rows.rows.size());
  float penalty = 0;
  std::size_t ranks = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const float slot_w = (canvas.x - 2 * kMargin) / static_cast<float>(rows.columns[g]);
    const std::size_t n = groups[g].size();
    const std::size_t slots = (n + static_cast<std::size_t>(rows.columns[g]) - 1) /
                              static_cast<std::size_t>(rows.columns[g]) *
                              static_cast<std::size_t>(rows.columns[g]);
    penalty += static_cast<float>(n) * std::fabs(std::log(slot_w / slot_h / 1.6f)) +
               0.3f * static_cast<float>(slots - n);
    // Between groups, the arrows would cross a group's other rows.
    if (groups.size() > 1)
      penalty += 2.5f * static_cast<float>(slots / static_cast<std::size_t>(rows.columns[g]) - 1) *
                 static_cast<float>(n);
    ranks += n;
  }
  return penalty / static_cast<float>(ranks);
}

// Places each row's boxes spread across the canvas, rows spread down it;
// false when the rows are taller than the canvas.
bool place_rows(std::vector<PanelLayout>& panels, const Rows& rows, Vec2 canvas, float group_gap) {
  const std::vector<float> gaps = least_gaps(rows, group_gap);
  std::vector<float> heights;
  float total = 0;
  for (std::size_t i = 0; i < rows.rows.size(); ++i) {
    float tallest = 0;
    for (int rank : rows.rows[i]) tallest = std::max(tallest, panels[rank].box.height());
    heights.push_back(tallest);
    total += tallest + gaps[i];
  }
  const float room = canvas.y - 2 * kMargin;
  if (total > room + 0.01f) return false;
  // Spare height: into the gaps between rows (room for arrows and labels), or
  // around a single row.
  const float spare = room - total;
  const std::size_t n = rows.rows.size();
  float y = kMargin + (n == 1 ? spare * 0.5f : 0.0f);
  const float usable = canvas.x - 2 * kMargin;
  const std::vector<int>& group_of_row = rows.group_of_row;
  const bool several_groups = group_of_row.back() > 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) y += gaps[i] + spare / static_cast<float>(n - 1);
    // Spread across the row, at least a column gap apart, centered.
    const std::vector<int>& row = rows.rows[i];
    const auto in_row = static_cast<float>(row.size());
    const float width = panels[row.front()].box.width();
    const float spacing = std::max(width + kColumnGap, usable / in_row);
    const float left = kMargin + (usable - ((in_row - 1) * spacing + width)) * 0.5f;
    for (std::size_t k = 0; k < row.size(); ++k) {
      PanelLayout& panel = panels[row[k]];
      const float center_x = left + width * 0.5f + static_cast<float>(k) * spacing;
      // With groups, the first group's boxes stand on the bottom of their
      // row and the others hang from the top of theirs: the band between
      // the groups, where the arrows' labels go, stays clear.
      float top = y + (heights[i] - panel.box.height()) * 0.5f;
      if (several_groups) top = group_of_row[i] == 0 ? y + heights[i] - panel.box.height() : y;
      move_panel(panel, {center_x - panel.box.width() * 0.5f, top});
    }
    y += heights[i];
  }
  return true;
}

// ---- arrows and labels ------------------------------------------------------------

// Where the segment from the box's center towards `toward` leaves it.
Vec2 exit_point(const Rect& box, Vec2 toward) {
  const Vec2 c = box.center();
  const Vec2 d = toward - c;
  const float half_w = box.width() * 0.5f + 4.0f;
  const float half_h = box.height() * 0.5f + 4.0f;
  const float tx = d.x != 0 ? half_w / std::fabs(d.x) : kUnbounded;
  const float ty = d.y != 0 ? half_h / std::fabs(d.y) : kUnbounded;
  return c + d * std::min({tx, ty, 1.0f});
}

float distance_to(Vec2 point, const ArrowLayout& arrow) {
  const Vec2 d = arrow.to - arrow.from;
  const float length2 = d.x * d.x + d.y * d.y;
  const Vec2 p = point - arrow.from;
  const float t = length2 > 0 ? std::clamp((p.x * d.x + p.y * d.y) / length2, 0.0f, 1.0f) : 0.0f;
  const Vec2 off = point - (arrow.from + d * t);
  return std::sqrt(off.x * off.x + off.y * off.y);
}

// Whether the arrow's line passes through the rectangle (Liang-Barsky
// clipping of the segment against it).
bool crosses(const Rect& box, const ArrowLayout& arrow) {
  const Vec2 d = arrow.to - arrow.from;
  float enter = 0;
  float leave = 1;
  const float p[4] = {-d.x, d.x, -d.y, d.y};
  const float q[4] = {arrow.from.x - box.min.x, box.max.x - arrow.from.x, arrow.from.y - box.min.y,
                      box.max.y - arrow.from.y};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;  // parallel to this edge, outside it
      continue;
    }
    const float t = q[i] / p[i];
    if (p[i] < 0)
      enter = std::max(enter, t);
    else
      leave = std::min(leave, t);
    if (enter > leave) return false;
  }
  return true;
}

void place_arrows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  for (const ArrowView& arrow : view.arrows) {
    const Rect& a = layout.panels[static_cast<std::size_t>(arrow.src)].box;
    const Rect& b = layout.panels[static_cast<std::size_t>(arrow.dst)].box;
    // Sideways a little, so that messages both ways between two ranks do not
    // cover each other.
    const Vec2 d = b.center() - a.center();
    const float length = std::max(1.0f, std::sqrt(d.x * d.x + d.y * d.y));
    const Vec2 side = Vec2{-d.y, d.x} * (9.0f / length);
    layout.arrows.push_back(
        {arrow.src, arrow.dst, exit_point(a, b.center()) + side, exit_point(b, a.center()) + side});
  }
  // Labels: beside their arrow where they cover no box and no other label,
  // else where they cover least; always inside the canvas.
  const Rect canvas = Rect::at({0, 0}, layout.canvas);
  const Rect inside = canvas.grown(-2);
  const bool ring = layout.arrangement == "ring";
  const float size = fonts.ui.size * (view.arrows.size() > 8 ? 0.8f : 0.95f);
  const Vec2 backing{4, 2};
  for (std::size_t i = 0; i < layout.arrows.size(); ++i) {
    const ArrowLayout& arrow = layout.arrows[i];
    const ArrowView& source = view.arrows[i];
    const std::string text = shorten_to_width(source.label + (source.reduced ? " +" : ""), fonts.ui,
                                              size, inside.width() - 2 * backing.x);
    TextItem item = text_item({}, text, FontKind::Ui, size, Tone::Text, fonts);
    const Vec2 box_size = item.extent + backing * 2;
    // Candidates: around three points of the arrow, on rings of growing
    // radius; the nearest that covers nothing wins.
    const Vec2 d = arrow.to - arrow.from;
    Rect best;
    float best_score = kUnbounded;
    for (float t : {0.5f, 0.35f, 0.65f}) {
      const Vec2 anchor = arrow.from + d * t;
      for (float radius = 0; radius <= 160; radius += 10) {
        const int directions = radius == 0 ? 1 : 16;
        for (int k = 0; k < directions; ++k) {
          const float angle = 2 * kPi * static_cast<float>(k) / static_cast<float>(directions);
          const Vec2 c = anchor + Vec2{std::cos(angle), std::sin(angle)} * radius;
          Vec2 min = c - box_size * 0.5f;
          min.x =
              std::clamp(min.x, inside.min.x, std::max(inside.min.x, inside.max.x - box_size.x));
          min.y =
              std::clamp(min.y, inside.min.y, std::max(inside.min.y, inside.max.y - box_size.y));
          const Rect candidate = Rect::at(min, box_size);
          float cover = 0;
          for (const PanelLayout& panel : layout.panels) cover += candidate.overlap_area(panel.box);
          for (const LabelLayout& label : layout.labels)
            cover += 2 * candidate.overlap_area(label.box.grown(3));
          // Beside the lines rather than on them, so that they stay visible.
          for (const ArrowLayout& line : layout.arrows)
            if (crosses(candidate.grown(2), line)) cover += 30;
          // Nearer its own arrow than any other, or it reads as theirs.
          const float own = distance_to(candidate.center(), arrow);
          for (std::size_t j = 0; j < layout.arrows.size(); ++j)
            if (j != i && distance_to(candidate.center(), layout.arrows[j]) < own) {
              cover += 40;
              break;
            }
          const Vec2 off = candidate.center() - anchor;
          // On a ring, outside it: the middle is where the arrows cross.
          const Vec2 from_middle = anchor - canvas.center();
          const bool inward = ring && off.x * from_middle.x + off.y * from_middle.y < 0;
          const float score = cover * 100 + std::sqrt(off.x * off.x + off.y * off.y) +
                              (t == 0.5f ? 0.0f : 8.0f) + (inward ? 60.0f : 0.0f);
          if (score < best_score) {
            best_score = score;
            best = candidate;
          }
        }
        if (best_score < radius) break;  // nothing further out can beat it
      }
    }
    item.at = best.min + backing;
    layout.labels.push_back({best, std::move(item)});
  }
}

}  // namespace

RanksLayout layout_ranks(const FrameView& view, Vec2 canvas, const LayoutFonts& fonts) {
  RanksLayout layout;
  layout.canvas = canvas;
  if (view.ranks.empty()) return layout;
  const std::vector<std::vector<int>> groups = role_groups(view);
  const bool roles = groups.size() > 1;
  const float label_h = fonts.ui.size + 8;
  const float group_gap = std::max(kGap, label_h + 24);
  const int p = static_cast<int>(view.ranks.size());

  // Every way to put the groups on rows, best shaped first.
  std::vector<Rows> shapes = all_shapes(groups, canvas);
  std::stable_sort(shapes.begin(), shapes.end(), [&](const Rows& a, const Rows& b) {
    return shape_penalty(a, groups, canvas) < shape_penalty(b, groups, canvas);
  });
  auto width_in = [&](const Rows& rows) {
    return [&rows, &groups](int rank) { return rows.width_of(rank, groups); };
  };

  // Every arrangement at every level of detail: the best score that fits
  // wins. Less detail costs; the ring, the picture rings are known by, earns
  // a bonus; rows pay for a poor shape.
  constexpr float kLevelCost[kDetailLevels] = {0.0f, 0.35f, 0.7f, 1.2f, 1.6f};
  constexpr float kRingBonus = 0.5f;
  float best = kUnbounded;
  auto take = [&](std::vector<PanelLayout> panels, const char* arrangement, int level,
                  float score) {
    layout.panels = std::move(panels);
    layout.arrangement = arrangement;
    layout.detail = level;
    best = score;
  };
  for (int level = 0; level < kDetailLevels; ++level) {
    if (!roles && p >= 2 && kLevelCost[level] - kRingBonus < best) {
      const float width = ring_width(view.ranks.size(), canvas);
      std::vector<PanelLayout> panels = build_panels(
          view, [width](int) { return width; }, kDetails[level], kUnbounded, fonts);
      if (place_ring(panels, canvas))
        take(std::move(panels), "ring", level, kLevelCost[level] - kRingBonus);
    }
    for (const Rows& rows : shapes) {
      const float score = kLevelCost[level] + shape_penalty(rows, groups, canvas);
      if (score >= best) continue;
      std::vector<PanelLayout> panels =
          build_panels(view, width_in(rows), kDetails[level], kUnbounded, fonts);
      if (place_rows(panels, rows, canvas, roles ? group_gap : kGap))
        take(std::move(panels), roles ? "groups" : "grid", level, score);
    }
  }
  if (best == kUnbounded) {
    // Nothing fits whole: the best-shaped rows, every box cut to its share
    // of the height.
    const Rows& rows = shapes.front();
    const std::vector<float> gaps = least_gaps(rows, roles ? group_gap : kGap);
    float gap_total = 0;
    for (float gap : gaps) gap_total += gap;
    const float share =
        std::max(0.0f, (canvas.y - 2 * kMargin - gap_total) / static_cast<float>(rows.rows.size()));
    const int level = kDetailLevels - 1;
    layout.panels = build_panels(view, width_in(rows), kDetails[level], share, fonts);
    place_rows(layout.panels, rows, canvas, roles ? group_gap : kGap);
    layout.arrangement = roles ? "groups" : "grid";
    layout.detail = kDetailLevels;
  }
  place_arrows(layout, view, fonts);
  return layout;
}

WindowLayout window_layout(Vec2 display) {
  WindowLayout layout;
  layout.side_width = std::clamp(display.x * 0.27f, 290.0f, 360.0f);
  layout.log_height = std::clamp(display.y * 0.17f, 96.0f, 150.0f);
  return layout;
}

}  // namespace ringlab::gui
