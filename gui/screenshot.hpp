// Offscreen rendering for `ringlab gui --screenshot`: an OpenGL framebuffer of
// exactly the requested size (independent of the X screen, which under Xvfb
// may be smaller or 8-bit), read back and written as a PNG.
#pragma once

#include <memory>
#include <string>

namespace ringlab::gui {

// Needs a current OpenGL 3 context. Throws std::runtime_error saying what the
// driver refused.
class OffscreenTarget {
 public:
  OffscreenTarget(int width, int height);
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  void bind();  // draw calls now land here, viewport set to the full size
  // Reads the pixels back (top row first) and writes an RGB PNG through
  // ops/atomic_file: the file is whole or, when a write fails (a full disk),
  // left as it was; throws std::runtime_error naming the path then.
  void write_png(const std::string& path);

 private:
  struct FramebufferApi;  // the OpenGL 3 entry points, looked up per target
  int width_;
  int height_;
  unsigned framebuffer_ = 0;
  unsigned color_buffer_ = 0;
  std::unique_ptr<FramebufferApi> gl_;
};

}  // namespace ringlab::gui
