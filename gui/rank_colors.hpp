// The ranks' colors as plain RGB, apart from Dear ImGui so that the headless
// tests can check them (palette.hpp turns them into ImGui's colors).
//
// Sixteen colors (the GUI's largest world) picked from the sRGB cube to be as
// far apart as possible in CIEDE2000: every two at least 21 apart, and every
// one at least 34 from the panel, the "no input yet" gray and the backing of
// a cell's texts; none near the arrows' yellow or the text's white. The
// first four are the furthest apart, for the articles' four ranks.
// tests/test_gui_layout.cpp measures it.
#pragma once

#include <cstdint>

namespace ringlab::gui {

struct Rgb {
  std::uint8_t r = 0;
  std::uint8_t g = 0;
  std::uint8_t b = 0;
};

inline constexpr int kRankColorCount = 16;
inline constexpr Rgb kRankRgb[kRankColorCount] = {
    {0, 153, 255},   {255, 153, 0},   {170, 238, 0},   {221, 0, 221},
    {238, 34, 51},   {51, 136, 68},   {255, 204, 255}, {136, 238, 255},
    {0, 255, 187},   {255, 187, 170}, {0, 153, 153},   {153, 153, 17},
    {238, 221, 170}, {153, 136, 204}, {221, 119, 153}, {170, 119, 85},
};

// What the rank colors are drawn on and beside.
inline constexpr Rgb kPanelRgb{34, 38, 46};      // a rank's box
inline constexpr Rgb kMissingRgb{58, 62, 70};    // a cell with no rank's input yet
inline constexpr Rgb kCellLabelRgb{16, 18, 22};  // behind a cell's value and ranks
inline constexpr Rgb kTextRgb{235, 238, 242};
inline constexpr Rgb kArrowRgb{255, 210, 90};
inline constexpr Rgb kLostRgb{255, 110, 100};  // a message that never arrived

// Rank r's color (r >= 0; repeats after 16).
inline Rgb rank_rgb(int rank) { return kRankRgb[rank % kRankColorCount]; }

}  // namespace ringlab::gui
