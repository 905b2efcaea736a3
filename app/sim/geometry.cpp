#include "app/sim/geometry.h"

#include <algorithm>

namespace fieldbrain::sim {

double distance_to_segment(Vec2 p, const Segment& s) {
  const Vec2 ab = s.b - s.a;
  const double len2 = dot(ab, ab);
  if (len2 <= 0.0) return length(p - s.a);
  const double t = std::clamp(dot(p - s.a, ab) / len2, 0.0, 1.0);
  return length(p - (s.a + ab * t));
}

std::optional<double> ray_hits_segment(Vec2 origin, Vec2 dir, const Segment& s) {
  const Vec2 e = s.b - s.a;
  const double denom = cross(dir, e);
  if (std::abs(denom) < 1e-12) return std::nullopt;  // parallel
  const Vec2 w = s.a - origin;
  const double t = cross(w, e) / denom;    // along the ray
  const double u = cross(w, dir) / denom;  // along the segment, 0..1
  if (t < 0.0 || u < 0.0 || u > 1.0) return std::nullopt;
  return t;
}

std::optional<double> ray_hits_circle(Vec2 origin, Vec2 dir, const Circle& c) {
  const Vec2 oc = origin - c.c;
  const double b = dot(oc, dir);
  const double q = dot(oc, oc) - c.r * c.r;
  if (q <= 0.0) return 0.0;  // inside
  const double disc = b * b - q;
  if (disc < 0.0) return std::nullopt;
  const double t = -b - std::sqrt(disc);
  if (t < 0.0) return std::nullopt;
  return t;
}

}  // namespace fieldbrain::sim
