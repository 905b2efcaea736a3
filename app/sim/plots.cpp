#include "app/sim/plots.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fieldbrain::sim {
namespace {

const Rgb kPalette[] = {{31, 119, 180},  {255, 127, 14}, {148, 103, 189}, {23, 190, 207},
                        {227, 119, 194}, {140, 86, 75},  {188, 189, 34},  {127, 127, 127}};

}  // namespace

int plot_pixels(double metres, double px_per_m) {
  return std::max(1, int(std::ceil(metres * px_per_m)));
}

RasterImage plot_trajectories(const Arena& arena, const std::vector<std::vector<Vec2>>& paths,
                              double px_per_m) {
  if (!(px_per_m > 0)) throw std::invalid_argument("px_per_m must be positive");
  const int w = plot_pixels(arena.width, px_per_m), h = plot_pixels(arena.height, px_per_m);
  const auto gray = [](double g) {
    const auto v = static_cast<uint8_t>(std::clamp(g, 0.0, 1.0) * 255);
    return Rgb{v, v, v};
  };
  // Reflectances are drawn compressed into light greys so the line stays distinct from the
  // black walls.
  const auto shade = [&gray](double g) { return gray(0.35 + 0.6 * g); };
  RasterImage img(w, h, shade(arena.floor_gray));
  auto px = [&](Vec2 p) { return std::pair<double, double>{p.x * px_per_m, h - p.y * px_per_m}; };
  const double thick = std::max(2.0, 0.02 * px_per_m);

  if (arena.line) {
    const auto& pts = arena.line->points;
    const size_t n = pts.size(), segments = arena.line->closed ? n : n - 1;
    for (size_t i = 0; i < segments; ++i) {
      const auto [x0, y0] = px(pts[i]);
      const auto [x1, y1] = px(pts[(i + 1) % n]);
      img.line(x0, y0, x1, y1, std::max(1.0, arena.line->width * px_per_m),
               shade(arena.line->gray));
    }
  }
  for (const auto& [lo, hi] : arena.boxes) {
    const auto [x0, y0] = px(lo);
    const auto [x1, y1] = px(hi);
    img.fill_rect(int(x0), int(y0), int(x1), int(y1), Rgb{70, 70, 70});
  }
  for (const auto& c : arena.circles) {
    const auto [x, y] = px(c.c);
    img.fill_disc(x, y, c.r * px_per_m, Rgb{70, 70, 70});
  }
  for (const auto& s : arena.walls) {
    const auto [x0, y0] = px(s.a);
    const auto [x1, y1] = px(s.b);
    img.line(x0, y0, x1, y1, thick, Rgb{0, 0, 0});
  }
  if (arena.sound) {
    const auto [x, y] = px(arena.sound->position);
    img.fill_disc(x, y, 0.04 * px_per_m, Rgb{230, 200, 0});
  }
  for (size_t r = 0; r < paths.size(); ++r) {
    const auto& path = paths[r];
    if (path.empty()) continue;
    const Rgb colour = kPalette[r % (sizeof kPalette / sizeof kPalette[0])];
    for (size_t i = 1; i < path.size(); ++i) {
      const auto [x0, y0] = px(path[i - 1]);
      const auto [x1, y1] = px(path[i]);
      img.line(x0, y0, x1, y1, std::max(1.5, 0.008 * px_per_m), colour);
    }
    const auto [sx, sy] = px(path.front());
    const auto [ex, ey] = px(path.back());
    img.fill_disc(sx, sy, std::max(3.0, 0.025 * px_per_m), Rgb{0, 160, 0});
    img.fill_disc(ex, ey, std::max(3.0, 0.025 * px_per_m), Rgb{200, 0, 0});
  }
  return img;
}

RasterImage plot_field_slice(const FieldSlice& slice, int scale) {
  const int n = int(slice.values.size());
  if (n == 0 || scale < 1) throw std::invalid_argument("empty slice or scale < 1");
  double peak = 0.0;
  for (const auto& row : slice.values) {
    for (float v : row) {
      if (std::isfinite(v)) peak = std::max(peak, double(std::abs(v)));
    }
  }
  RasterImage img(n * scale, n * scale, Rgb{255, 255, 255});
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n && j < int(slice.values[i].size()); ++j) {
      const double v = slice.values[i][j];
      const double t = (peak > 0 && std::isfinite(v)) ? std::clamp(v / peak, -1.0, 1.0) : 0.0;
      const auto fade = static_cast<uint8_t>(255 * (1.0 - std::abs(t)));
      const Rgb c = t >= 0 ? Rgb{255, fade, fade} : Rgb{fade, fade, 255};
      // Row i is the slice's first index (x), drawn top to bottom; column j is y.
      img.fill_rect(j * scale, i * scale, (j + 1) * scale - 1, (i + 1) * scale - 1, c);
    }
  }
  return img;
}

}  // namespace fieldbrain::sim
