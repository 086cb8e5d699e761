// Where everything on the canvas goes, computed from a frame, the canvas size
// and the fonts' metrics only: rank boxes, their texts and cells, the step's
// arrows and their labels. Painting (paint.cpp) walks these structs and adds
// nothing; the tests check them without a window.
//
// The layout fits any canvas: boxes are placed so that no two intersect and
// everything lies inside the canvas. When the frame has more than fits, the
// boxes show less (buffers this step does not touch fold into one line, then
// smaller cells, then the box is cut with "...").
#pragma once

#include <string>
#include <vector>

#include "gui/font_metrics.hpp"
#include "gui/frame.hpp"
#include "gui/geometry.hpp"

namespace ringlab::gui {

enum class FontKind { Ui, Mono };
enum class Tone { Text, Dim, OnColor };  // OnColor: dark, on a rank's bright color

struct TextItem {
  Vec2 at;           // top-left corner
  std::string text;  // may hold '\n'
  FontKind font = FontKind::Ui;
  float size = 0;  // pixels
  Tone tone = Tone::Text;
  Vec2 extent;  // measured with the layout's metrics
  Rect box() const { return Rect::at(at, extent); }
};

// One element of a buffer, striped with the colors of the ranks whose inputs
// it contains (none: the "no input yet" color), and labelled with them.
struct CellItem {
  Rect box;
  std::vector<int> ranks;
  bool outlined = false;  // scratch: allocated by the algorithm
  TextItem value;         // centered above the label, on a dark backing
  TextItem label;         // the ranks ("0-2", "all"), along the bottom, on the stripes;
                          // empty when the cell has no input or is too narrow for it
};

struct PanelLayout {
  int rank = 0;
  Rect box;
  bool active = false;  // sends or receives in this step: a bright border
  Rect swatch;          // the rank's color, before the title
  std::vector<TextItem> texts;
  std::vector<CellItem> cells;
  bool cut = false;  // the box was too small for everything ("..." at its end)
};

struct ArrowLayout {
  int src = 0;
  int dst = 0;
  Vec2 from;
  Vec2 to;
};

struct LabelLayout {
  Rect box;       // the backing, inside the canvas
  TextItem text;  // inside box
};

struct RanksLayout {
  Vec2 canvas;
  std::string arrangement;          // "ring", "grid" or "groups" (servers above workers)
  int detail = 0;                   // 0: everything; higher: less in each box
  std::vector<PanelLayout> panels;  // one per rank, in rank order
  std::vector<ArrowLayout> arrows;  // one per message of the step
  std::vector<LabelLayout> labels;  // one per arrow
};

RanksLayout layout_ranks(const FrameView& view, Vec2 canvas, const LayoutFonts& fonts);

// The window's fixed parts at a display size: the side panel on the right,
// the step log under the canvas.
struct WindowLayout {
  float side_width = 384;
  float log_height = 150;
};
WindowLayout window_layout(Vec2 display);

}  // namespace ringlab::gui
