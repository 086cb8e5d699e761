// Points and rectangles for the layout, in pixels with y growing downwards
// (as ImGui's), kept free of ImGui so that layout is tested without a window.
#pragma once

#include <algorithm>

namespace ringlab::gui {

struct Vec2 {
  float x = 0;
  float y = 0;
  friend Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
  friend Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
  friend Vec2 operator*(Vec2 a, float s) { return {a.x * s, a.y * s}; }
  bool operator==(const Vec2&) const = default;
};

struct Rect {
  Vec2 min;
  Vec2 max;
  static Rect at(Vec2 origin, Vec2 size) { return {origin, origin + size}; }
  float width() const { return max.x - min.x; }
  float height() const { return max.y - min.y; }
  Vec2 center() const { return (min + max) * 0.5f; }
  // Whether the two share any area (touching edges do not count).
  bool intersects(const Rect& other) const {
    return min.x < other.max.x && other.min.x < max.x && min.y < other.max.y && other.min.y < max.y;
  }
  bool contains(const Rect& other) const {
    return other.min.x >= min.x && other.min.y >= min.y && other.max.x <= max.x &&
           other.max.y <= max.y;
  }
  float overlap_area(const Rect& other) const {
    const float w = std::min(max.x, other.max.x) - std::max(min.x, other.min.x);
    const float h = std::min(max.y, other.max.y) - std::max(min.y, other.min.y);
    return w > 0 && h > 0 ? w * h : 0.0f;
  }
  Rect grown(float by) const { return {{min.x - by, min.y - by}, {max.x + by, max.y + by}}; }
  // Whether the segment from `from` to `to` passes through the rectangle
  // (Liang-Barsky clipping of the segment against it).
  bool crossed_by(Vec2 from, Vec2 to) const {
    const Vec2 d = to - from;
    float enter = 0;
    float leave = 1;
    const float p[4] = {-d.x, d.x, -d.y, d.y};
    const float q[4] = {from.x - min.x, max.x - from.x, from.y - min.y, max.y - from.y};
    for (int i = 0; i < 4; ++i) {
      if (p[i] == 0) {
        if (q[i] < 0) return false;  // parallel to this edge, outside it
        continue;
      }
      const float t = q[i] / p[i];
      if (p[i] < 0)
        enter = std::max(enter, t);
      else
        leave = std::min(leave, t);
      if (enter > leave) return false;
    }
    return true;
  }
  bool operator==(const Rect&) const = default;
};

}  // namespace ringlab::gui
