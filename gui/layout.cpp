// Arrangements, from the most telling picture to the most compact:
//   ring    collectives from three ranks up: rank 0 at the top, clockwise on
//           a closed curve, as rings are drawn (layout_ring.hpp), so that the
//           arrows between neighbours never cross; taken at the first level
//           of detail (kDetails, layout_box.hpp) and box width where it fits,
//           down to boxes of cells alone. Two ranks are a pair: side by side,
//           as rows put them, the same in every frame.
//   groups  ranks with roles (servers, workers): each role on rows of its own,
//           servers on top, with a band between them for the arrows' labels
//           When no box fits whole, every box is cut to the largest size
//           that fits as a ring ("..." where it holds more), as long as
//           each still shows cells.
//   grid    a ring that fits nowhere: rows of equal columns
// Groups and grids are tried at every level of detail and the best score
// among those that fit wins; when none fits, the best-shaped rows cut the
// boxes short. Arrows and labels come last (layout_arrows.hpp).
#include "gui/layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/layout_arrows.hpp"
#include "gui/layout_box.hpp"
#include "gui/layout_ring.hpp"

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;      // between the canvas' edge and any box
constexpr float kGap = 16;        // between boxes, at least
constexpr float kColumnGap = 30;  // between columns of rows: room for an arrow
constexpr float kMaxBoxWidth = 340;
constexpr float kMinBoxWidth = 150;
constexpr float kUnbounded = std::numeric_limits<float>::max();
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

// The ring at the best level of detail and box width that fit; false when
// none does. Less detail costs, and so do narrower boxes (tall and thin, they
// wrap every line): a width at 90% of the widest costs as much as a level.
bool lay_out_ring(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  constexpr float kLevelCost[kDetailLevels] = {0.0f, 0.3f, 0.6f, 0.9f, 1.2f, 1.6f, 2.0f};
  constexpr float kNarrowCost = 3.0f;  // per 100% narrower
  const std::vector<float> widths = ring_widths(view.ranks.size(), layout.canvas);
  float best = kUnbounded;
  for (float width : widths) {
    const float narrow = kNarrowCost * (1 - width / widths.front());
    for (int level = 0; level < kDetailLevels && kLevelCost[level] + narrow < best; ++level) {
      std::vector<PanelLayout> panels = build_panels(
          view, std::vector<float>(view.ranks.size(), width), kDetails[level], kUnbounded, fonts);
      if (!place_ring(panels, layout.canvas)) continue;
      layout.panels = std::move(panels);
      layout.arrangement = "ring";
      layout.detail = level;
      best = kLevelCost[level] + narrow;
      break;
    }
  }
  return best < kUnbounded;
}

// A ring of boxes cut to the largest size that fits (the most compact level
// of detail, "..." where a box holds more); false when not even that fits,
// or when a box would show none of its cells.
bool lay_out_cut_ring(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  const Vec2 size = largest_ring_box(view.ranks.size(), layout.canvas);
  if (size.x <= 0) return false;
  std::vector<PanelLayout> panels =
      build_panels(view, std::vector<float>(view.ranks.size(), size.x), kDetails[kDetailLevels - 1],
                   size.y, fonts);
  if (!place_ring(panels, layout.canvas)) return false;
  // A box cut down to no cells at all shows nothing of its rank's data: rows
  // of larger boxes do better then.
  for (const PanelLayout& panel : panels)
    if (panel.cells.empty() && !view.ranks[static_cast<std::size_t>(panel.rank)].buffers.empty())
      return false;
  layout.panels = std::move(panels);
  layout.arrangement = "ring";
  layout.detail = kDetailLevels;
  return true;
}

// Rows of boxes: every way to put the groups on rows at every level of the
// full boxes (not the compact ones, which only a ring needs); the best score
// that fits wins, else the best-shaped rows with every box cut to its share
// of the height.
void lay_out_rows(RanksLayout& layout, const FrameView& view, const LayoutFonts& fonts) {
  const Vec2 canvas = layout.canvas;
  const std::vector<std::vector<int>> groups = role_groups(view);
  const bool roles = groups.size() > 1;
  const float label_h = fonts.ui.size + 8;
  const float gap = roles ? std::max(kGap, label_h + 24) : kGap;
  std::vector<Rows> shapes = all_shapes(groups, canvas);
  std::stable_sort(shapes.begin(), shapes.end(), [&](const Rows& a, const Rows& b) {
    return shape_penalty(a, groups, canvas) < shape_penalty(b, groups, canvas);
  });
  auto widths_in = [&](const Rows& rows) {  // each rank's box width in a shape
    std::vector<float> widths;
    for (const RankPanel& panel : view.ranks) widths.push_back(rows.width_of(panel.rank, groups));
    return widths;
  };
  // Less detail costs; rows pay for a poor shape.
  constexpr float kLevelCost[] = {0.0f, 0.35f, 0.7f, 1.2f, 1.6f};
  float best = kUnbounded;
  for (int level = 0; level < static_cast<int>(std::size(kLevelCost)); ++level)
    for (const Rows& rows : shapes) {
      const float score = kLevelCost[level] + shape_penalty(rows, groups, canvas);
      if (score >= best) continue;
      std::vector<PanelLayout> panels =
          build_panels(view, widths_in(rows), kDetails[level], kUnbounded, fonts);
      if (!place_rows(panels, rows, canvas, gap)) continue;
      layout.panels = std::move(panels);
      layout.arrangement = roles ? "groups" : "grid";
      layout.detail = level;
      best = score;
    }
  if (best < kUnbounded) return;
  // Nothing fits whole: every box cut to its share of the height.
  const Rows& rows = shapes.front();
  float gap_total = 0;
  for (float g : least_gaps(rows, gap)) gap_total += g;
  const float share =
      std::max(0.0f, (canvas.y - 2 * kMargin - gap_total) / static_cast<float>(rows.rows.size()));
  layout.panels =
      build_panels(view, widths_in(rows), kDetails[std::size(kLevelCost) - 1], share, fonts);
  place_rows(layout.panels, rows, canvas, gap);
  layout.arrangement = roles ? "groups" : "grid";
  layout.detail = kDetailLevels;
}

}  // namespace

RanksLayout layout_ranks(const FrameView& view, Vec2 canvas, const LayoutFonts& fonts) {
  RanksLayout layout;
  layout.canvas = canvas;
  if (view.ranks.empty()) return layout;
  const bool roles = role_groups(view).size() > 1;
  const bool ring = !roles && view.ranks.size() >= 3;
  if (!ring || !(lay_out_ring(layout, view, fonts) || lay_out_cut_ring(layout, view, fonts)))
    lay_out_rows(layout, view, fonts);
  place_arrows(layout, view, fonts);
  return layout;
}

WindowLayout window_layout(Vec2 display) {
  WindowLayout layout;
  // 290 at 1024 wide, 382 at 1280 (where the legend needs it), 400 from 1330 on.
  layout.side_width = std::clamp(290.0f + (display.x - 1024.0f) * 0.36f, 290.0f, 400.0f);
  layout.log_height = std::clamp(display.y * 0.17f, 96.0f, 150.0f);
  return layout;
}

}  // namespace ringlab::gui
