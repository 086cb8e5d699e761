// Arrangements, tried from the most telling picture to the most compact:
//   ring    collectives: rank 0 at the top, clockwise on an ellipse, as rings
//           are drawn; taken only while no two boxes come close, and from
//           three ranks up (two ranks are a pair: side by side, as rows put
//           them, the same in every frame)
//   groups  ranks with roles (servers, workers): each role on rows of its own,
//           servers on top, with a band between them for the arrows' labels
//   grid    everything else: rows of equal columns
// Each is tried at every level of detail (kDetails, layout_box.hpp) and the
// best score among those that fit wins; when none fits, the best-shaped rows
// cut the boxes short. Arrows and labels come last (layout_arrows.hpp).
#include "gui/layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/layout_arrows.hpp"
#include "gui/layout_box.hpp"

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;      // between the canvas' edge and any box
constexpr float kGap = 16;        // between boxes, at least
constexpr float kColumnGap = 30;  // between columns of rows: room for an arrow
constexpr float kMaxBoxWidth = 340;
constexpr float kMinBoxWidth = 150;
constexpr float kUnbounded = std::numeric_limits<float>::max();
constexpr float kPi = 3.14159265f;

// Whether no two boxes come closer than kGap.
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

// Places the boxes on the ellipse; false when two would come close or an
// arrow between neighbors would cross a third box.
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
  if (!apart(panels)) return false;
  // A ring is read along its arrows: the one from each rank to the next
  // must pass beside every other box, not through it (tall boxes on a flat
  // ellipse would put rank 0 across the line from rank 1 to rank 2).
  for (int r = 0; r < p; ++r) {
    const Vec2 from = panels[r].box.center();
    const Vec2 to = panels[(r + 1) % p].box.center();
    for (int other = 0; other < p; ++other)
      if (other != r && other != (r + 1) % p && panels[other].box.grown(4).crossed_by(from, to))
        return false;
  }
  return true;
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
  // Each rank's box width in a shape.
  auto widths_in = [&](const Rows& rows) {
    std::vector<float> widths;
    for (const RankPanel& panel : view.ranks) widths.push_back(rows.width_of(panel.rank, groups));
    return widths;
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
    if (!roles && p >= 3 && kLevelCost[level] - kRingBonus < best) {
      const float width = ring_width(view.ranks.size(), canvas);
      std::vector<PanelLayout> panels = build_panels(
          view, std::vector<float>(view.ranks.size(), width), kDetails[level], kUnbounded, fonts);
      if (place_ring(panels, canvas))
        take(std::move(panels), "ring", level, kLevelCost[level] - kRingBonus);
    }
    for (const Rows& rows : shapes) {
      const float score = kLevelCost[level] + shape_penalty(rows, groups, canvas);
      if (score >= best) continue;
      std::vector<PanelLayout> panels =
          build_panels(view, widths_in(rows), kDetails[level], kUnbounded, fonts);
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
    layout.panels = build_panels(view, widths_in(rows), kDetails[level], share, fonts);
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
