// One rank's box at a level of detail: its title, the article's line, and
// its buffers as labelled rows of cells, at the origin; cut with "..." where
// it would be taller than allowed. Part of layout_ranks (layout.hpp).
#pragma once

#include <string>
#include <vector>

#include "gui/layout.hpp"

namespace ringlab::gui {

// What a box shows at one level of detail.
enum class Keep { All, UserAndTouched, PrimaryAndTouched };
struct Detail {
  float cell_height;       // p <= 8
  float cell_height_many;  // p > 8
  Keep keep;
  bool printed_labels;    // the value printed after a non-primary buffer's name
  float line_scale;       // the article's line, in mono font sizes (0: no line)
  int line_limit;         // its lines at most (0: all)
  float cell_text_scale;  // a cell's value, in mono font sizes (at most)
  float cell_padding;     // a cell is this much wider than its widest value or label
  bool tensor_only;       // the article's line without "Rank 0 has data": the title says whose
  float least_cell_width;  // cells are at least this wide
  float label_scale;       // a cell's ranks label, in mono font sizes
  bool label_widens;       // cells are as wide as their labels (else a label shows where it fits)
};
// The last two are compact: only the cells (the ring of many ranks uses them).
inline constexpr Detail kDetails[] = {
    {30, 26, Keep::All, true, 0.9f, 0, 1.0f, 12, false, 40, 0.56f, true},
    {30, 26, Keep::UserAndTouched, true, 0.9f, 0, 1.0f, 12, false, 40, 0.56f, true},
    {26, 24, Keep::UserAndTouched, false, 0.9f, 0, 0.95f, 10, false, 30, 0.54f, true},
    {24, 22, Keep::PrimaryAndTouched, false, 0.85f, 3, 0.85f, 8, false, 30, 0.52f, true},
    {22, 21, Keep::PrimaryAndTouched, false, 0.8f, 2, 0.8f, 8, true, 30, 0.5f, true},
    {22, 21, Keep::PrimaryAndTouched, false, 0.0f, 0, 0.72f, 3, true, 20, 0.47f, true},
    {21, 20, Keep::PrimaryAndTouched, false, 0.0f, 0, 0.62f, 3, true, 14, 0.46f, false},
};
inline constexpr int kDetailLevels = static_cast<int>(std::size(kDetails));
static_assert(kDetailLevels == kOverviewDetail, "the overview comes after every level");

// The least sizes, in pixels, at which a cell's value and its ranks label
// read at a glance; a layout with anything smaller is not taken while an
// overview fits.
inline constexpr float kLeastValuePx = 9.0f;
inline constexpr float kLeastLabelPx = 7.0f;

// Whether every value and ranks label in the boxes is at least that size,
// and every box of a rank with data shows some of its cells.
bool readable(const std::vector<PanelLayout>& panels, const FrameView& view);

// Every rank's box at the origin, rank r `widths[r]` wide and at most
// `max_height` high.
std::vector<PanelLayout> build_panels(const FrameView& view, const std::vector<float>& widths,
                                      const Detail& detail, float max_height,
                                      const LayoutFonts& fonts);

// The overview's focus box: rank `rank`'s box at the origin, with `hint`
// (how to pick another rank) under its title; it keeps every user buffer
// (as the rank's chip does) at any level of detail.
PanelLayout build_focus_box(const FrameView& view, int rank, float width, const Detail& detail,
                            float max_height, const std::string& hint, const LayoutFonts& fonts);

// A text at `at`, measured with the layout's fonts.
TextItem text_item(Vec2 at, std::string text, FontKind font, float size, Tone tone,
                   const LayoutFonts& fonts);

// Moves a box and everything in it so that its top-left corner is `to`.
void move_panel(PanelLayout& panel, Vec2 to);

}  // namespace ringlab::gui
