// Where everything on the canvas goes, computed from a frame, the canvas size
// and the fonts' metrics only: rank boxes, their texts and cells, the step's
// arrows and their labels. Painting (paint.cpp) walks these structs and adds
// nothing; the tests check them without a window.
//
// The layout fits any canvas: boxes are placed so that no two intersect and
// everything lies inside the canvas. When the frame has more than fits, the
// boxes show less (buffers this step does not touch fold into one line, then
// smaller cells), never a value too small to read. Where even that does not
// fit, every rank becomes a chip (its title and its cells' colors, no text)
// and one rank, the focus, gets a box of its own in full ("overview"); only
// where not even that fits are the boxes cut with "...".
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
  int buffer = -1;        // its buffer: an index into the rank's RankPanel::buffers
};

struct PanelLayout {
  int rank = 0;
  Rect box;
  bool active = false;  // sends or receives in this step: a bright border
  Rect swatch;          // the rank's color, before the title
  std::vector<TextItem> texts;
  std::vector<CellItem> cells;
  bool cut = false;  // the box was too small for everything ("..." at its end)
  bool chip = false;   // a chip: the title and the cells' colors, values in the focus box
  bool focus = false;  // the rank the focus box shows (a chip in its rank's color)
};

struct ArrowLayout {
  int src = 0;
  int dst = 0;
  Vec2 from;
  Vec2 to;
  bool faint = false;  // drawn thin, under the boxes: not the focus's, in a crossing overview
  bool lost = false;   // never arrived: dashed, in red, a cross for a head
};

struct LabelLayout {
  int arrow = 0;  // its arrow: an index into RanksLayout::arrows
  Rect box;       // the backing, inside the canvas
  TextItem text;  // inside box
};

// RanksLayout::detail of the overview, and of boxes cut short, past the
// levels of whole boxes (layout_box.hpp's kDetails).
inline constexpr int kOverviewDetail = 7;
inline constexpr int kCutDetail = 8;

struct RanksLayout {
  Vec2 canvas;
  std::string arrangement;          // "ring", "grid" or "groups" (servers above workers)
  int detail = 0;  // 0: everything; higher: less in each box (kOverviewDetail, kCutDetail)
  std::vector<PanelLayout> panels;  // one per rank, in rank order
  std::vector<ArrowLayout> arrows;  // one per message of the step
  // One per arrow that has room for it, the focus's first, then those that
  // carry data: a label that would cover a box or another label is left out
  // (the side panel lists every message).
  std::vector<LabelLayout> labels;
  // Overview: the panels are chips, and the focus box shows rank `focus` in
  // full, with a line saying how to pick another. Otherwise `focus` is the
  // rank the learner picked, ringed (-1: none).
  bool overview = false;
  int focus = -1;
  PanelLayout focus_box;
  // Overview of a ring whose messages cross it: the focus's arrows go to and
  // from its box, the others are faint (layout_overview.hpp).
  bool arrows_at_focus_box = false;
};

// The rank the focus box shows: the one the learner picked (`selected`, -1:
// none), else the one the sentence follows, else rank 0.
int focus_rank(const FrameView& view, int selected);

RanksLayout layout_ranks(const FrameView& view, Vec2 canvas, const LayoutFonts& fonts,
                         int selected = -1);

// The rank whose box, chip or focus box holds `point` (a click there picks
// it); -1: none.
int rank_at(const RanksLayout& layout, Vec2 point);

// The window's fixed parts at a display size: the side panel on the right,
// the step log under the canvas.
struct WindowLayout {
  float side_width = 384;
  float log_height = 150;
};
WindowLayout window_layout(Vec2 display);

}  // namespace ringlab::gui
