#include "gui/font_metrics.hpp"

#include <algorithm>

namespace ringlab::gui {

namespace {

// Decodes one UTF-8 code point at text[i] and moves i past it (a malformed
// byte counts as one code point, as ImGui's decoder does).
unsigned next_code_point(std::string_view text, std::size_t& i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : 4;
  if (i + length > text.size()) length = 1;
  unsigned c = length == 1   ? lead
               : length == 2 ? lead & 0x1F
               : length == 3 ? lead & 0x0F
                             : lead & 0x07;
  for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (byte(i + k) & 0x3F);
  i += length;
  return c;
}

}  // namespace

Vec2 FontMetrics::measure(std::string_view text, float at_size) const {
  const float scale = at_size / size;
  float widest = 0;
  float height = 0;
  float line = 0;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned c = next_code_point(text, i);
    if (c == '\n') {
      widest = std::max(widest, line);
      height += at_size;
      line = 0;
      continue;
    }
    if (c == '\r') continue;
    line += (c < advance.size() ? advance[c] : fallback) * scale;
  }
  widest = std::max(widest, line);
  if (line > 0 || height == 0) height += at_size;
  return {widest, height};
}

FontMetrics uniform_metrics(float size, float em_fraction) {
  FontMetrics metrics;
  metrics.size = size;
  metrics.advance.assign(128, size * em_fraction);
  metrics.fallback = size * em_fraction;
  return metrics;
}

std::string wrap_between_elements(const std::string& text, const FontMetrics& font, float size,
                                  float width) {
  std::string flat;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      flat += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    flat += ' ';
  }
  if (font.width(flat, size) <= width) return flat;
  // "Rank 0 has data" / "tensor([16, 16, 12,  4])" reads better than a break
  // inside the tensor, when the tensor fits on its own line.
  const std::size_t tensor_at = flat.find(" tensor(");
  if (tensor_at != std::string::npos &&
      font.width(std::string_view(flat).substr(tensor_at + 1), size) <= width &&
      font.width(std::string_view(flat).substr(0, tensor_at), size) <= width)
    return flat.substr(0, tensor_at) + "\n" + flat.substr(tensor_at + 1);
  std::vector<std::string> pieces;  // each ends where a break is allowed
  std::size_t begin = 0;
  const std::size_t first_tensor = flat.find("tensor(");
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const bool after_comma = i > 0 && flat[i - 1] == ',' && flat[i] == ' ';
    const bool before_tensor = flat[i] == ' ' && flat.compare(i + 1, 7, "tensor(") == 0;
    const bool between_words = flat[i] == ' ' && i < first_tensor;  // "Rank 0 has"
    if (after_comma || before_tensor || between_words) {
      pieces.push_back(flat.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  pieces.push_back(flat.substr(begin));
  std::string out;
  std::string current;
  for (const std::string& piece : pieces) {
    const std::string candidate = current.empty() ? piece : current + " " + piece;
    if (!current.empty() && font.width(candidate, size) > width) {
      out += current + "\n";
      current = piece;
    } else {
      current = candidate;
    }
  }
  return out + current;
}

std::string shorten_to_width(const std::string& text, const FontMetrics& font, float size,
                             float width) {
  if (font.width(text, size) <= width) return text;
  std::string cut = text;
  while (!cut.empty()) {
    // Drop a whole UTF-8 sequence: continuation bytes are 10xxxxxx.
    unsigned char dropped = 0;
    do {
      dropped = static_cast<unsigned char>(cut.back());
      cut.pop_back();
    } while (!cut.empty() && (dropped & 0xC0) == 0x80);
    while (!cut.empty() && cut.back() == ' ') cut.pop_back();
    if (font.width(cut + "...", size) <= width) return cut + "...";
  }
  return font.width("...", size) <= width ? "..." : "";
}

}  // namespace ringlab::gui
