// Plane geometry for the simulated arena: points, segments, circles, and the two queries the
// car needs (how far along a ray is the first hit; how close is a point to a segment).
// Metres, radians, x to the right, y up, angles counter-clockwise from +x.
#pragma once

#include <cmath>
#include <optional>

namespace fieldbrain::sim {

inline constexpr double kPi = 3.14159265358979323846;

struct Vec2 {
  double x = 0.0;
  double y = 0.0;
};

inline Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
inline Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
inline Vec2 operator*(Vec2 a, double s) { return {a.x * s, a.y * s}; }
inline double dot(Vec2 a, Vec2 b) { return a.x * b.x + a.y * b.y; }
inline double cross(Vec2 a, Vec2 b) { return a.x * b.y - a.y * b.x; }
inline double length(Vec2 a) { return std::hypot(a.x, a.y); }
inline Vec2 unit(double angle) { return {std::cos(angle), std::sin(angle)}; }
// Rotates a body-frame offset (forward, left) into the world frame at `heading`.
inline Vec2 body_to_world(double heading, double forward, double left) {
  const double c = std::cos(heading), s = std::sin(heading);
  return {forward * c - left * s, forward * s + left * c};
}

struct Segment {
  Vec2 a, b;
};

struct Circle {
  Vec2 c;
  double r = 0.0;
};

// Distance from p to the closest point of segment s.
double distance_to_segment(Vec2 p, const Segment& s);

// Distance t >= 0 along the ray origin + t*dir (dir of unit length) to the first point of s,
// or nullopt when the ray misses. A ray that runs along a collinear segment counts as a miss.
std::optional<double> ray_hits_segment(Vec2 origin, Vec2 dir, const Segment& s);

// Same for a circle; a ray starting inside the circle hits at t = 0.
std::optional<double> ray_hits_circle(Vec2 origin, Vec2 dir, const Circle& c);

}  // namespace fieldbrain::sim
