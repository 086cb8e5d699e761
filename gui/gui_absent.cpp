// try_open() for builds without Dear ImGui/GLFW/OpenGL (see CMakeLists.txt).
#include "gui/gui.hpp"

namespace ringlab::gui {

bool built_with_gui() { return false; }

bool try_open(std::string& reason, const OpenOptions&) {
  reason = "this ringlab was built without the GUI (missing " RINGLAB_GUI_MISSING
           "); run `bash tools/deps.sh` as root and rebuild";
  return false;
}

}  // namespace ringlab::gui
