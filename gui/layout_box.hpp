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
  float line_scale;       // the article's line, in mono font sizes
  int line_limit;         // its lines at most (0: all)
  float cell_text_scale;  // a cell's value, in mono font sizes (at most)
  float cell_padding;     // a cell is this much wider than its widest value
  bool tensor_only;       // the article's line without "Rank 0 has data": the title says whose
};
inline constexpr Detail kDetails[] = {
    {30, 24, Keep::All, true, 0.9f, 0, 1.0f, 12, false},
    {30, 24, Keep::UserAndTouched, true, 0.9f, 0, 1.0f, 12, false},
    {24, 22, Keep::UserAndTouched, false, 0.9f, 0, 1.0f, 10, false},
    {22, 20, Keep::PrimaryAndTouched, false, 0.85f, 3, 0.85f, 8, false},
    {20, 18, Keep::PrimaryAndTouched, false, 0.8f, 2, 0.8f, 8, true},
};
inline constexpr int kDetailLevels = static_cast<int>(std::size(kDetails));

// Every rank's box at the origin, rank r `widths[r]` wide and at most
// `max_height` high.
std::vector<PanelLayout> build_panels(const FrameView& view, const std::vector<float>& widths,
                                      const Detail& detail, float max_height,
                                      const LayoutFonts& fonts);

// A text at `at`, measured with the layout's fonts.
TextItem text_item(Vec2 at, std::string text, FontKind font, float size, Tone tone,
                   const LayoutFonts& fonts);

// Moves a box and everything in it so that its top-left corner is `to`.
void move_panel(PanelLayout& panel, Vec2 to);

}  // namespace ringlab::gui
