// The 16 enc2field sites (docs/cycle.md "Static tables"): where the hierarchical predictor writes
// its patterns and the regions of the prediction-error field. Sensor j belongs to site j mod 16.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include <torch/torch.h>

namespace fieldbrain {

struct Site {
  int64_t x, y, z;
};

inline Site sensor_site(int64_t i, int64_t R) {
  return {static_cast<int64_t>(static_cast<double>((i % 4) * R) / 4.0 + R / 8.0),
          static_cast<int64_t>(static_cast<double>((i / 4) * R) / 4.0 + R / 8.0), R / 2};
}

// Half-open bounds [lo, hi) of cube(i, s) along one axis, clipped to [0, R).
struct CubeBounds {
  int64_t lo[3], hi[3];
};

inline CubeBounds cube_bounds(int64_t i, int64_t s, int64_t R) {
  const Site c = sensor_site(i, R);
  const int64_t centre[3] = {c.x, c.y, c.z};
  CubeBounds b{};
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = std::max<int64_t>(0, centre[a] - s);
    b.hi[a] = std::min<int64_t>(R, centre[a] + s + 1);
  }
  return b;
}

// The cube region of a [.., R, R, R] tensor (the last three dims).
inline torch::Tensor cube_view(const torch::Tensor& t, const CubeBounds& b) {
  const int64_t d = t.dim();
  return t.slice(d - 3, b.lo[0], b.hi[0]).slice(d - 2, b.lo[1], b.hi[1]).slice(d - 1, b.lo[2], b.hi[2]);
}

// [16, R] float 0/1: per site, the coordinates within distance `spread` of the site's centre
// along `axis` (0 x, 1 y, 2 z), for a spread given per (robot, timescale) on the device:
// spread [B,4] -> mask [B,4,16,R].
inline torch::Tensor cube_axis_mask(const torch::Tensor& spread, int64_t axis, int64_t R) {
  auto centre = torch::empty({16}, torch::kFloat);
  for (int64_t i = 0; i < 16; ++i) {
    const Site s = sensor_site(i, R);
    centre[i] = static_cast<float>(axis == 0 ? s.x : axis == 1 ? s.y : s.z);
  }
  const auto dev = spread.device();
  const auto coord = torch::arange(R, torch::kFloat).to(dev);
  const auto dist = (coord.view({1, R}) - centre.to(dev).view({16, 1})).abs();  // [16,R]
  return (dist.view({1, 1, 16, R}) <= spread.unsqueeze(-1).unsqueeze(-1)).to(torch::kFloat);
}

}  // namespace fieldbrain
