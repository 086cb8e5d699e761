// What the side panel shows beside the canvas, decided apart from Dear ImGui
// so that the headless tests read it: which settings have a control, and the
// cost block's lines. draw.cpp lays them out.
#pragma once

#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/walkthrough.hpp"

namespace ringlab::gui {

// The controls under "primitive" and "ranks", which every walkthrough has.
struct Controls {
  // The size control's label: "elements", "keys/server", "bucket cap",
  // "threshold"; empty where the size means nothing (a barrier moves no data).
  std::string size_label;
  bool op = false;    // a reducing collective
  bool root = false;  // a rooted one (and scatter_gather)
};
Controls controls_for(const Settings& settings);

// The cost block under "Cost model": the model's constants, this step, so
// far and in total, the bottleneck, and the size with algbw and busbw (or why
// there are none).
std::vector<std::string> cost_lines(const FrameView& view);

// The bytes table's header: the rank, this step, so far, the whole run.
inline constexpr const char* kBytesColumns[4] = {"bytes sent", "this step", "so far", "in all"};

}  // namespace ringlab::gui
