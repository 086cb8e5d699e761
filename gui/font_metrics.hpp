// A font's glyph advances as plain numbers, and the text measuring, wrapping
// and shortening the layout does with them. The window copies the advances
// from the fonts it loaded (fonts.hpp), so measuring here gives exactly what
// ImGui draws; tests may use those fonts or made-up metrics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gui/geometry.hpp"

namespace ringlab::gui {

struct FontMetrics {
  float size = 17.0f;          // the pixel size the advances below are for
  std::vector<float> advance;  // per code point, at `size` (ImFont::IndexAdvanceX)
  float fallback = 9.0f;       // any code point past the table

  // Width and height of `text` drawn at `at_size` pixels, as Dear ImGui 1.86's
  // ImFont::CalcTextSizeA measures it: '\n' starts a line, each line is
  // at_size high, a trailing empty line adds nothing.
  Vec2 measure(std::string_view text, float at_size) const;
  float width(std::string_view text, float at_size) const { return measure(text, at_size).x; }
};

// Metrics for a font whose every glyph advances by `em_fraction` of its size
// (a monospaced font: DejaVu Sans Mono is 0.602).
FontMetrics uniform_metrics(float size, float em_fraction);

struct LayoutFonts {
  FontMetrics ui;    // titles, arrow labels
  FontMetrics mono;  // tensors, as the articles print them
};

// Wraps a printed line to `width` only between elements (after ", " or before
// "tensor("), never inside a number as a word wrap would ("102.\n5000").
// PyTorch's own line breaks are joined first. A piece wider than `width` on
// its own stays whole (shorten_to_width cuts it).
std::string wrap_between_elements(const std::string& text, const FontMetrics& font, float size,
                                  float width);

// `text` (one line) if it fits in `width`, else its longest prefix that fits
// with "..." after it ("" when not even that fits).
std::string shorten_to_width(const std::string& text, const FontMetrics& font, float size,
                             float width);

}  // namespace ringlab::gui
