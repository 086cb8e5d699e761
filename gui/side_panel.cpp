#include "gui/side_panel.hpp"

#include <cstdio>

#include "primitives/collectives.hpp"

namespace ringlab::gui {

Controls controls_for(const Settings& settings) {
  Controls controls;
  const std::string& primitive = settings.primitive;
  const CollectiveInfo* collective = find_collective(primitive);
  if (primitive == kParameterServer)
    controls.size_label = "keys/server";
  else if (primitive == kDdpStep)
    controls.size_label = "bucket cap";
  else if (primitive == kHorovodStep)
    controls.size_label = "threshold";
  else if (!(collective && collective->input == Shape::None && collective->output == Shape::None))
    controls.size_label = "elements";
  controls.op = collective && collective->reduces;
  controls.root = (collective && collective->rooted) || primitive == kScatterGather;
  return controls;
}

std::vector<std::string> cost_lines(const FrameView& view) {
  const CostView& cost = view.cost;
  const sim::CostModel model = gui_cost_model();
  std::vector<std::string> lines;
  char text[160];
  std::snprintf(text, sizeof text, "alpha %s, links %.1f GB/s", seconds_text(model.alpha_s).c_str(),
                model.bandwidth_Bps / 1e9);
  lines.emplace_back(text);
  if (cost.has_step)
    lines.push_back("this step:   " + seconds_text(cost.step_seconds));
  else
    lines.emplace_back(view.training ? "this step:   (no messages)"
                                     : "this step:   (nothing sent yet)");
  // A training step's compute ticks keep the communication so far on the clock.
  if (cost.has_step || cost.elapsed_seconds > 0)
    lines.push_back("so far:      " + seconds_text(cost.elapsed_seconds) + " of " +
                    seconds_text(cost.total_seconds));
  else
    lines.push_back("total:       " + seconds_text(cost.total_seconds));
  if (!cost.bottleneck.empty()) lines.push_back("bottleneck: " + cost.bottleneck);
  if (view.training) return lines;  // its panel says what hides behind backward instead
  if (!cost.carries_data) {
    lines.emplace_back("no data moves: no size, algbw or busbw");
    return lines;
  }
  std::snprintf(text, sizeof text, "size %zu B   algbw %.4f GB/s", cost.size_bytes,
                cost.algbw_GBps);
  lines.emplace_back(text);
  std::snprintf(text, sizeof text, "busbw %.4f GB/s", cost.busbw_GBps);
  lines.emplace_back(text);
  return lines;
}

}  // namespace ringlab::gui
