#include "gui/window.hpp"

#include <GLFW/glfw3.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "gui/palette.hpp"
#include "gui/screenshot.hpp"
#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"

namespace ringlab::gui {

namespace {

std::string& last_glfw_error() {
  static std::string error;
  return error;
}

void remember_glfw_error(int code, const char* description) {
  last_glfw_error() = "GLFW error " + std::to_string(code) + ": " + description;
}

// DejaVu (fonts-dejavu-core, on nearly every Debian desktop) is far more
// readable at 1280x800 than ImGui's built-in 13-pixel bitmap font; without it,
// the built-in font is scaled up.
void load_fonts() {
  ImGuiIO& io = ImGui::GetIO();
  const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  Fonts& loaded = fonts();
  if (std::filesystem::exists(sans) && std::filesystem::exists(mono)) {
    loaded.ui = io.Fonts->AddFontFromFileTTF(sans, 17.0f);
    loaded.mono = io.Fonts->AddFontFromFileTTF(mono, 17.0f);
    loaded.heading = io.Fonts->AddFontFromFileTTF(sans, 21.0f);
  }
  if (loaded.ui == nullptr || loaded.mono == nullptr || loaded.heading == nullptr) {
    ImFontConfig config;
    config.SizePixels = 13.0f;
    loaded.ui = loaded.mono = loaded.heading = io.Fonts->AddFontDefault(&config);
    io.FontGlobalScale = 1.3f;
  }
}

// One GLFW window with an OpenGL 3 context and an ImGui context on it.
class Session {
 public:
  Session(const WindowOptions& options, bool visible) {
    if (std::string reason = missing_display_reason(); !reason.empty()) throw WindowError(reason);
    glfwSetErrorCallback(remember_glfw_error);
    if (glfwInit() == GLFW_FALSE)
      throw WindowError("cannot start GLFW (" + last_glfw_error() +
                        "); check that DISPLAY names a running X server");
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
    window_ = glfwCreateWindow(options.width, options.height, options.title.c_str(), nullptr,
                               nullptr);
    if (window_ == nullptr) {
      glfwTerminate();
      throw WindowError("cannot open an OpenGL 3.0 window (" + last_glfw_error() +
                        "); the GUI needs an OpenGL 3 driver (Debian: libgl1-mesa-dri)");
    }
    glfwMakeContextCurrent(window_);
    glfwSwapInterval(1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;  // the layout is computed, not saved
    apply_style();
    load_fonts();
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 130");
  }
  ~Session() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    fonts() = Fonts{};
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
    draw(seconds);
    ImGui::Render();
    const ImVec4 clear = colors().background;
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }

 private:
  GLFWwindow* window_ = nullptr;
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
