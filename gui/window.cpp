#include "gui/window.hpp"

#include <GLFW/glfw3.h>

#include <cstdlib>
#include <memory>

#include "gui/palette.hpp"
#include "gui/screenshot.hpp"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"

namespace ringlab::gui {

namespace {

// What GLFW last reported (glfwGetError keeps it, so no callback is needed).
std::string glfw_error() {
  const char* description = nullptr;
  const int code = glfwGetError(&description);
  if (code == GLFW_NO_ERROR) return "GLFW reported no error";
  return "GLFW error " + std::to_string(code) + ": " + (description ? description : "");
}

// One GLFW window with an OpenGL 3 context and an ImGui context on it.
class Session {
 public:
  Session(const WindowOptions& options, bool visible) {
    if (std::string reason = missing_display_reason(); !reason.empty()) throw WindowError(reason);
    if (glfwInit() == GLFW_FALSE)
      throw WindowError("cannot start GLFW (" + glfw_error() +
                        "); check that DISPLAY names a running X server");
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    window_ = glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr,
                               nullptr);
    if (window_ == nullptr) {
      const std::string error = glfw_error();
      glfwTerminate();
      throw WindowError("cannot open an OpenGL 3.0 window (" + error +
                        "); the GUI needs an OpenGL 3 driver (Debian: libgl1-mesa-dri)");
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // the layout is computed, not saved
    apply_style();
    fonts_ = load_fonts(ImGui::GetIO());
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 130");
  }
  ~Session() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  GLFWwindow* window() { return window_; }

  // fixed_size: the offscreen target's size, which overrides the window's.
  void frame(const FrameFn& draw, float seconds, const ImVec2* fixed_size) {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (fixed_size != nullptr) {
      ImGui::GetIO().DisplaySize = *fixed_size;
      ImGui::GetIO().DisplayFramebufferScale = ImVec2(1, 1);
    }
    ImGui::NewFrame();
    draw(seconds, fonts_);
    ImGui::Render();
    const ImVec4 clear = kColors.background;
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }

 private:
  GLFWwindow* window_ = nullptr;
  Fonts fonts_;
};

}  // namespace

std::string missing_display_reason() {
  const char* x11 = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if ((x11 != nullptr && *x11 != '\0') || (wayland != nullptr && *wayland != '\0')) return {};
  return "no display: neither DISPLAY nor WAYLAND_DISPLAY is set (run it on a desktop, over "
         "`ssh -X`, or under `xvfb-run -a` with --screenshot FILE.png)";
}

void run_window(const WindowOptions& options, const FrameFn& frame) {
  Session session(options, /*visible=*/true);
  double previous = glfwGetTime();
  while (glfwWindowShouldClose(session.window()) == GLFW_FALSE) {
    glfwPollEvents();
    const double now = glfwGetTime();
    int width = 0;
    int height = 0;
    glfwGetFramebufferSize(session.window(), &width, &height);
    glViewport(0, 0, width, height);
    session.frame(frame, static_cast<float>(now - previous), nullptr);
    previous = now;
    glfwSwapBuffers(session.window());
  }
}

void render_png(const WindowOptions& options, const FrameFn& frame, const std::string& png_path,
                int frames) {
  Session session(options, /*visible=*/false);
  OffscreenTarget target(options.width, options.height);
  const ImVec2 size(static_cast<float>(options.width), static_cast<float>(options.height));
  for (int i = 0; i < frames; ++i) {
    target.bind();
    session.frame(frame, 1.0f / 60.0f, &size);
  }
  target.write_png(png_path);
}

}  // namespace ringlab::gui
