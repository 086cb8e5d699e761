#include "gui/gui.hpp"

#include "gui/draw.hpp"
#include "gui/run.hpp"
#include "gui/state.hpp"
#include "gui/window.hpp"

namespace ringlab::gui {

bool built_with_gui() { return true; }

bool try_open(std::string& reason, const OpenOptions& options) {
  GuiState state = make_state(options.scenario, options.ranks);  // bad names throw
  apply(state, JumpTo{options.step});
  reason = missing_display_reason();
  if (!reason.empty()) return false;
  try {
    run_interactive(state, WindowOptions{});
  } catch (const WindowError& e) {
    reason = e.what();
    return false;
  }
  return true;
}

}  // namespace ringlab::gui
