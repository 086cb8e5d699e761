#include "gui/layout_rows.hpp"

#include <algorithm>
#include <cmath>

#include "gui/layout_box.hpp"

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;      // between the canvas' edge and any box
constexpr float kGap = 16;        // between boxes, at least
constexpr float kColumnGap = 30;  // between columns of rows: room for an arrow

float column_width(int columns, Vec2 canvas, float widest) {
  const float usable = canvas.x - 2 * kMargin;
  return std::min(widest, (usable - static_cast<float>(columns - 1) * kColumnGap) /
                              static_cast<float>(columns));
}

Rows rows_for(const std::vector<std::vector<int>>& groups, const std::vector<int>& columns,
              Vec2 canvas, BoxWidths box) {
  Rows rows;
  rows.columns = columns;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto per_row = static_cast<std::size_t>(columns[g]);
    rows.widths.push_back(column_width(columns[g], canvas, box.widest));
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

}  // namespace

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

// Every choice of columns per group whose boxes are wide enough (or one
// column): a group of n on r rows takes ceil(n / r) columns.
std::vector<Rows> all_shapes(const std::vector<std::vector<int>>& groups, Vec2 canvas,
                             BoxWidths box) {
  std::vector<std::vector<int>> choices;  // per group
  for (const std::vector<int>& group : groups) {
    const int n = static_cast<int>(group.size());
    std::vector<int> columns;
    for (int r = 1; r <= n; ++r) {
      const int c = (n + r - 1) / r;
      if ((c == 1 || column_width(c, canvas, box.widest) >= box.narrowest) &&
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
    shapes.push_back(rows_for(groups, columns, canvas, box));
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

}  // namespace ringlab::gui
