// `ringlab gui --screenshot` under `xvfb-run -a`: each walkthrough's middle
// step becomes a PNG of the requested size that is not blank (many colors,
// text on it). Skips with exit code 77 where xvfb-run is missing.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <unistd.h>
#include <set>
#include <string>

#include "gui/state.hpp"
#include "stb_image.h"  // libstb-dev: an independent PNG decoder

namespace {

bool have_xvfb_run() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

struct Picture {
  int width = 0;
  int height = 0;
  std::set<unsigned> colors;
  double background_share = 0;  // pixels of the most common color
  long text_edges = 0;          // horizontal text-color / other transitions
};

Picture read_png(const std::string& path) {
  Picture picture;
  int channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &picture.width, &picture.height, &channels, 3);
  REQUIRE_MESSAGE(pixels != nullptr, "cannot decode " << path << ": " << stbi_failure_reason());
  std::map<unsigned, long> counts;
  // The GUI's text color (gui/palette.hpp: 235, 238, 242): glyph stems reach it.
  const unsigned text = (235u << 16) | (238u << 8) | 242u;
  for (int y = 0; y < picture.height; ++y) {
    bool previous_is_text = false;
    for (int x = 0; x < picture.width; ++x) {
      const unsigned char* p = pixels + 3 * (static_cast<std::size_t>(y) * picture.width + x);
      const unsigned rgb = (unsigned{p[0]} << 16) | (unsigned{p[1]} << 8) | p[2];
      ++counts[rgb];
      const bool is_text = rgb == text;
      if (x > 0 && is_text != previous_is_text) ++picture.text_edges;
      previous_is_text = is_text;
    }
  }
  stbi_image_free(pixels);
  long most = 0;
  for (const auto& [rgb, n] : counts) {
    picture.colors.insert(rgb);
    most = std::max(most, n);
  }
  picture.background_share = static_cast<double>(most) / (picture.width * picture.height);
  return picture;
}

}  // namespace

TEST_CASE("screenshots of the three walkthroughs at a middle step") {
  if (!have_xvfb_run()) {
    std::puts("SKIP: xvfb-run is missing (Debian: apt-get install xvfb xauth)");
    std::exit(77);
  }
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("ringlab_gui_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  for (const std::string scenario : {"ring_allreduce", "scatter_gather", "parameter_server"}) {
    CAPTURE(scenario);
    // The middle frame that has messages in it.
    const ringlab::gui::GuiState state = ringlab::gui::make_state(scenario);
    int frame = ringlab::gui::frame_count(state) / 2;
    if (state.recording.frames[frame].step == 0) ++frame;
    const std::string png = (folder / (scenario + ".png")).string();
    const int width = 1280;
    const int height = 800;
    const std::string command = std::string("xvfb-run -a ") + RINGLAB_EXE + " gui --scenario " +
                                scenario + " --step " + std::to_string(frame) + " --width " +
                                std::to_string(width) + " --height " + std::to_string(height) +
                                " --screenshot " + png + " > " + png + ".log 2>&1";
    const int status = std::system(command.c_str());
    REQUIRE_MESSAGE(status == 0, command << " failed; see " << png << ".log");
    const Picture picture = read_png(png);
    CHECK(picture.width == width);
    CHECK(picture.height == height);
    CHECK(picture.colors.size() >= 32);        // rank colors, anti-aliased text, arrows
    CHECK(picture.background_share < 0.85);    // not one flat color
    MESSAGE(scenario << ": " << picture.colors.size() << " colors, background " << picture.background_share << ", " << picture.text_edges << " text edges");
    CHECK(picture.text_edges >= 800);          // lots of glyphs
  }
  std::filesystem::remove_all(folder);
}
