#include "gui/screenshot.hpp"

#include <GLFW/glfw3.h>  // includes GL/gl.h
// clang-format off: glext.h needs gl.h first
#include <GL/glext.h>
// clang-format on

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/atomic_file.hpp"
#include "stb_image_write.h"  // libstb-dev, which libimgui-dev already needs

namespace ringlab::gui {

namespace {

// stb's writer hands the encoded PNG over in pieces.
void append_to_string(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                             static_cast<std::size_t>(size));
}

template <typename Fn>
Fn load(const char* name) {
  auto fn = reinterpret_cast<Fn>(glfwGetProcAddress(name));
  if (fn == nullptr)
    throw std::runtime_error(std::string("the OpenGL driver has no ") + name +
                             " (OpenGL 3.0 is needed for screenshots)");
  return fn;
}

}  // namespace

// Framebuffer objects are OpenGL 3.0: not in GL/gl.h's 1.x prototypes, so they
// are looked up through GLFW once a context is current.
struct OffscreenTarget::FramebufferApi {
  PFNGLGENFRAMEBUFFERSPROC gen_framebuffers = load<PFNGLGENFRAMEBUFFERSPROC>("glGenFramebuffers");
  PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers =
      load<PFNGLDELETEFRAMEBUFFERSPROC>("glDeleteFramebuffers");
  PFNGLBINDFRAMEBUFFERPROC bind_framebuffer = load<PFNGLBINDFRAMEBUFFERPROC>("glBindFramebuffer");
  PFNGLGENRENDERBUFFERSPROC gen_renderbuffers =
      load<PFNGLGENRENDERBUFFERSPROC>("glGenRenderbuffers");
  PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers =
      load<PFNGLDELETERENDERBUFFERSPROC>("glDeleteRenderbuffers");
  PFNGLBINDRENDERBUFFERPROC bind_renderbuffer =
      load<PFNGLBINDRENDERBUFFERPROC>("glBindRenderbuffer");
  PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage =
      load<PFNGLRENDERBUFFERSTORAGEPROC>("glRenderbufferStorage");
  PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer =
      load<PFNGLFRAMEBUFFERRENDERBUFFERPROC>("glFramebufferRenderbuffer");
  PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status =
      load<PFNGLCHECKFRAMEBUFFERSTATUSPROC>("glCheckFramebufferStatus");
};

OffscreenTarget::OffscreenTarget(int width, int height)
    : width_(width), height_(height), gl_(std::make_unique<FramebufferApi>()) {
  const FramebufferApi& gl = *gl_;
  gl.gen_framebuffers(1, &framebuffer_);
  gl.bind_framebuffer(GL_FRAMEBUFFER, framebuffer_);
  gl.gen_renderbuffers(1, &color_buffer_);
  gl.bind_renderbuffer(GL_RENDERBUFFER, color_buffer_);
  gl.renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  gl.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER,
                              color_buffer_);
  if (gl.check_framebuffer_status(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
    throw std::runtime_error("the OpenGL driver cannot make a " + std::to_string(width) + "x" +
                             std::to_string(height) + " offscreen framebuffer; try a smaller size");
}

OffscreenTarget::~OffscreenTarget() {
  const FramebufferApi& gl = *gl_;
  gl.bind_framebuffer(GL_FRAMEBUFFER, 0);
  gl.delete_renderbuffers(1, &color_buffer_);
  gl.delete_framebuffers(1, &framebuffer_);
}

void OffscreenTarget::bind() {
  gl_->bind_framebuffer(GL_FRAMEBUFFER, framebuffer_);
  glViewport(0, 0, width_, height_);
}

void OffscreenTarget::write_png(const std::string& path) {
  bind();
  const auto row_bytes = static_cast<std::size_t>(width_) * 3;
  std::vector<unsigned char> pixels(row_bytes * static_cast<std::size_t>(height_));
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's first row is the bottom one; PNG's is the top one.
  stbi_flip_vertically_on_write(1);
  // Encoded in memory, then written as every file ringlab writes: whole or
  // not at all, each write checked (stb's own file writer ignores a full disk).
  std::string png;
  if (stbi_write_png_to_func(append_to_string, &png, width_, height_, 3, pixels.data(),
                             static_cast<int>(row_bytes)) == 0 ||
      png.empty())
    throw std::runtime_error("cannot encode the " + std::to_string(width_) + "x" +
                             std::to_string(height_) + " screenshot for " + path + " as a PNG");
  write_file_atomically(path, "the screenshot", png);
}

}  // namespace ringlab::gui
