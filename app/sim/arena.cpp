#include "app/sim/arena.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>

namespace fieldbrain::sim {
namespace {

std::vector<double> numbers(const nlohmann::json& j, size_t n, const std::string& what) {
  if (!j.is_array() || j.size() != n) {
    throw std::invalid_argument(what + " must be an array of " + std::to_string(n) + " numbers");
  }
  std::vector<double> out;
  for (const auto& v : j) {
    if (!v.is_number()) throw std::invalid_argument(what + " must hold numbers only");
    out.push_back(v.get<double>());
  }
  return out;
}

double number(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) {
    throw std::invalid_argument(where + "." + key + " must be a number");
  }
  return it->get<double>();
}

void refuse_unknown(const nlohmann::json& j, const std::set<std::string>& known,
                    const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!known.count(it.key())) throw std::invalid_argument("unknown key " + where + it.key());
  }
}

}  // namespace

double Arena::ray_cast(Vec2 origin, double angle, double max_range) const {
  const Vec2 dir = unit(angle);
  double best = max_range;
  auto consider = [&best](std::optional<double> t) {
    if (t && *t < best) best = *t;
  };
  for (const auto& s : walls) consider(ray_hits_segment(origin, dir, s));
  for (const auto& s : box_edges) consider(ray_hits_segment(origin, dir, s));
  for (const auto& c : circles) consider(ray_hits_circle(origin, dir, c));
  return best;
}

bool Arena::disc_collides(Vec2 centre, double radius) const {
  if (centre.x < radius || centre.y < radius || centre.x > width - radius ||
      centre.y > height - radius) {
    return true;
  }
  for (const auto& s : walls) {
    if (distance_to_segment(centre, s) < radius) return true;
  }
  for (const auto& [lo, hi] : boxes) {
    // Closest point of the filled rectangle to the centre (the centre itself when inside).
    const Vec2 q{std::clamp(centre.x, lo.x, hi.x), std::clamp(centre.y, lo.y, hi.y)};
    if (length(centre - q) < radius) return true;
  }
  for (const auto& c : circles) {
    if (length(centre - c.c) < radius + c.r) return true;
  }
  return false;
}

double Arena::floor_gray_at(Vec2 p) const {
  if (!line || line->points.size() < 2) return floor_gray;
  const auto& pts = line->points;
  const size_t n = pts.size();
  const size_t segments = line->closed ? n : n - 1;
  for (size_t i = 0; i < segments; ++i) {
    if (distance_to_segment(p, {pts[i], pts[(i + 1) % n]}) <= 0.5 * line->width) {
      return line->gray;
    }
  }
  return floor_gray;
}

void from_json(const nlohmann::json& j, Arena& a) {
  if (!j.is_object()) throw std::invalid_argument("the map must be a JSON object");
  refuse_unknown(j,
                 {"name", "size", "floor_gray", "line", "walls", "boxes", "circles", "start_poses",
                  "sound", "comment"},
                 "");
  a = Arena{};
  a.name = j.value("name", std::string("arena"));
  if (!j.contains("size")) throw std::invalid_argument("size [W, H] is required");
  const auto size = numbers(j.at("size"), 2, "size");
  a.width = size[0];
  a.height = size[1];
  if (!(a.width > 0.2 && a.height > 0.2 && a.width < 1000 && a.height < 1000)) {
    throw std::invalid_argument("size must be between 0.2 and 1000 m on each side");
  }
  a.floor_gray = j.value("floor_gray", 0.75);
  if (a.floor_gray < 0.0 || a.floor_gray > 1.0) {
    throw std::invalid_argument("floor_gray must be in 0..1");
  }
  const Vec2 c00{0, 0}, c10{a.width, 0}, c11{a.width, a.height}, c01{0, a.height};
  a.walls = {{c00, c10}, {c10, c11}, {c11, c01}, {c01, c00}};
  for (const auto& w : j.value("walls", nlohmann::json::array())) {
    const auto v = numbers(w, 4, "walls[]");
    a.walls.push_back({{v[0], v[1]}, {v[2], v[3]}});
  }
  for (const auto& b : j.value("boxes", nlohmann::json::array())) {
    const auto v = numbers(b, 4, "boxes[]");
    const Vec2 lo{std::min(v[0], v[2]), std::min(v[1], v[3])};
    const Vec2 hi{std::max(v[0], v[2]), std::max(v[1], v[3])};
    a.boxes.emplace_back(lo, hi);
    const Vec2 lo_hi{lo.x, hi.y}, hi_lo{hi.x, lo.y};
    a.box_edges.push_back({lo, hi_lo});
    a.box_edges.push_back({hi_lo, hi});
    a.box_edges.push_back({hi, lo_hi});
    a.box_edges.push_back({lo_hi, lo});
  }
  for (const auto& c : j.value("circles", nlohmann::json::array())) {
    const auto v = numbers(c, 3, "circles[]");
    if (v[2] <= 0) throw std::invalid_argument("circles[] radius must be positive");
    a.circles.push_back({{v[0], v[1]}, v[2]});
  }
  if (j.contains("line")) {
    const auto& l = j.at("line");
    if (!l.is_object()) throw std::invalid_argument("line must be an object");
    refuse_unknown(l, {"gray", "width", "closed", "points"}, "line.");
    FloorLine line;
    line.gray = l.value("gray", 0.1);
    line.width = l.value("width", 0.03);
    line.closed = l.value("closed", false);
    for (const auto& p : l.value("points", nlohmann::json::array())) {
      const auto v = numbers(p, 2, "line.points[]");
      line.points.push_back({v[0], v[1]});
    }
    if (line.points.size() < 2) throw std::invalid_argument("line.points needs 2 points or more");
    if (line.width <= 0) throw std::invalid_argument("line.width must be positive");
    a.line = line;
  }
  for (const auto& p : j.value("start_poses", nlohmann::json::array())) {
    const auto v = numbers(p, 3, "start_poses[]");
    a.start_poses.push_back({{v[0], v[1]}, v[2] * kPi / 180.0});
  }
  if (a.start_poses.empty()) a.start_poses.push_back({{a.width / 2, a.height / 2}, 0.0});
  if (j.contains("sound")) {
    const auto& s = j.at("sound");
    if (!s.is_object()) throw std::invalid_argument("sound must be an object");
    refuse_unknown(s, {"x", "y", "frequency_hz", "level"}, "sound.");
    SoundSource src;
    src.position = {number(s, "x", "sound"), number(s, "y", "sound")};
    src.frequency_hz = s.value("frequency_hz", 440.0);
    src.level = s.value("level", 0.5);
    a.sound = src;
  }
}

Arena load_arena(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open arena map " + path);
  try {
    return nlohmann::json::parse(in).get<Arena>();
  } catch (const std::exception& e) {
    throw std::runtime_error("arena map " + path + ": " + e.what());
  }
}

std::string default_arena_path() {
  return std::string(FIELDBRAIN_SOURCE_DIR) + "/configs/arena_default.json";
}

}  // namespace fieldbrain::sim
