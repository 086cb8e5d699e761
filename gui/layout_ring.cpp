#include "gui/layout_ring.hpp"

#include <algorithm>
#include <cmath>

#include "gui/layout_box.hpp"

namespace ringlab::gui {

namespace {

constexpr float kMargin = 6;         // between the canvas' edge and any box
constexpr float kGap = 16;           // between any two boxes, at least
constexpr float kNeighbourGap = 30;  // between neighbours: room for the arrow between them
constexpr float kPi = 3.14159265f;
constexpr float kLeastCutHeight = 56;  // a cut box: its title and a row of cells

constexpr float kExponents[] = {2.0f, 2.5f, 3.0f, 4.0f, 6.0f, 8.0f};
constexpr int kSamples = 480;

// sign(x) |x|^power, with x = 0 where float rounding leaves cos(pi / 2) a
// hair from it (a small power would blow that up to pixels).
float signed_power(float x, float power) {
  if (std::fabs(x) < 1e-6f) return 0.0f;
  return std::copysign(std::pow(std::fabs(x), power), x);
}

// The unit superellipse of each exponent, sampled from the top clockwise:
// computed once, scaled by every ring.
const std::vector<Vec2>& unit_curve(std::size_t exponent) {
  static const std::vector<std::vector<Vec2>> curves = [] {
    std::vector<std::vector<Vec2>> all;
    for (float n : kExponents) {
      std::vector<Vec2> samples;
      for (int i = 0; i <= kSamples; ++i) {
        const float t = -kPi / 2 + 2 * kPi * static_cast<float>(i) / kSamples;
        samples.push_back({signed_power(std::cos(t), 2 / n), signed_power(std::sin(t), 2 / n)});
      }
      all.push_back(std::move(samples));
    }
    return all;
  }();
  return curves[exponent];
}

// `count` points on the superellipse kExponents[exponent] around `center`,
// the first at the top, clockwise, evenly spaced in the metric that counts
// `unit.x` pixels across and `unit.y` down as one.
std::vector<Vec2> curve_points(int count, Vec2 center, Vec2 radius, std::size_t exponent,
                               Vec2 unit) {
  const std::vector<Vec2>& curve = unit_curve(exponent);
  std::vector<Vec2> samples;
  std::vector<float> arc;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    samples.push_back(center + Vec2{radius.x * curve[i].x, radius.y * curve[i].y});
    float length = 0;
    if (i > 0) {
      const Vec2 d = samples[i] - samples[i - 1];
      length = std::hypot(d.x / unit.x, d.y / unit.y);
    }
    arc.push_back(i > 0 ? arc.back() + length : 0.0f);
  }
  std::vector<Vec2> points;
  std::size_t i = 0;
  for (int k = 0; k < count; ++k) {
    const float target = arc.back() * static_cast<float>(k) / static_cast<float>(count);
    while (i + 1 < arc.size() && arc[i + 1] < target) ++i;
    const float span = arc[i + 1] - arc[i];
    const float f = span > 0 ? (target - arc[i]) / span : 0.0f;
    points.push_back(samples[i] + (samples[i + 1] - samples[i]) * f);
  }
  return points;
}

// The gap between two boxes along the axis that separates them (negative
// when they overlap).
float gap_between(const Rect& a, const Rect& b) {
  return std::max({b.min.x - a.max.x, a.min.x - b.max.x, b.min.y - a.max.y, a.min.y - b.max.y});
}

bool fits_as_ring(const std::vector<PanelLayout>& panels) {
  const std::size_t p = panels.size();
  for (std::size_t a = 0; a < p; ++a)
    for (std::size_t b = a + 1; b < p; ++b) {
      const bool neighbours = b == a + 1 || (a == 0 && b == p - 1);
      if (gap_between(panels[a].box, panels[b].box) < (neighbours ? kNeighbourGap : kGap))
        return false;
    }
  // A ring is read along its arrows: the one from each rank to the next
  // passes beside every other box, not through it.
  for (std::size_t r = 0; r < p; ++r) {
    const Vec2 from = panels[r].box.center();
    const Vec2 to = panels[(r + 1) % p].box.center();
    for (std::size_t other = 0; other < p; ++other)
      if (other != r && other != (r + 1) % p && panels[other].box.grown(4).crossed_by(from, to))
        return false;
  }
  return true;
}

}  // namespace

std::vector<float> ring_widths(std::size_t ranks, Vec2 canvas) {
  const float divisor = ranks <= 4 ? 3.6f : ranks <= 8 ? 4.2f : 5.6f;
  const float widest =
      std::min(std::clamp(canvas.x / divisor, 150.0f, 280.0f), canvas.x - 2 * kMargin);
  std::vector<float> widths;
  for (float w = widest; w >= 96.0f; w *= 0.9f) widths.push_back(std::floor(w));
  return widths;
}

bool place_ring(std::vector<PanelLayout>& panels, Vec2 canvas) {
  const int p = static_cast<int>(panels.size());
  float tallest = 0;
  for (const PanelLayout& panel : panels) tallest = std::max(tallest, panel.box.height());
  const float width = panels.front().box.width();
  if (tallest > canvas.y - 2 * kMargin || width > canvas.x - 2 * kMargin) return false;
  const Vec2 center = canvas * 0.5f;
  const Vec2 radius{std::max(0.0f, canvas.x * 0.5f - kMargin - width * 0.5f),
                    std::max(0.0f, canvas.y * 0.5f - kMargin - tallest * 0.5f)};
  const Vec2 unit{width + kNeighbourGap, tallest + kNeighbourGap};
  for (std::size_t n = 0; n < std::size(kExponents); ++n) {
    const std::vector<Vec2> points = curve_points(p, center, radius, n, unit);
    for (int r = 0; r < p; ++r)
      move_panel(panels[r], points[r] - Vec2{width * 0.5f, panels[r].box.height() * 0.5f});
    if (fits_as_ring(panels)) return true;
  }
  return false;
}

Vec2 largest_ring_box(std::size_t ranks, Vec2 canvas) {
  Vec2 best;
  for (float width : ring_widths(ranks, canvas)) {
    auto fits = [&](float height) {
      std::vector<PanelLayout> boxes(ranks);
      for (PanelLayout& box : boxes) box.box = Rect::at({0, 0}, {width, height});
      return place_ring(boxes, canvas);
    };
    float low = 0;  // fits (no box at all)
    float high = canvas.y;
    if (!fits(24)) continue;
    for (int i = 0; i < 8; ++i) {
      const float mid = (low + high) * 0.5f;
      (fits(mid) ? low : high) = mid;
    }
    // Tall enough for a title and a row of cells, if any is.
    const bool tall = low >= kLeastCutHeight;
    const bool best_tall = best.y >= kLeastCutHeight;
    if ((tall && !best_tall) || (tall == best_tall && width * low > best.x * best.y))
      best = {width, std::floor(low)};
  }
  return best;
}

}  // namespace ringlab::gui
