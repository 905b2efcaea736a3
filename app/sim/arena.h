// The 2-D arena the simulated PiCar-X drives in, read from a small JSON map
// (configs/arena_default.json): a rectangle closed by walls, extra wall segments, box and
// circle obstacles, a floor with a dark line for the grayscale sensors, start poses, and an
// optional sound source for the synthetic audio features.
//
// Map format (metres, degrees; unknown keys are an error so a typo never goes unnoticed):
//   {"name": "...", "size": [W, H],            // arena [0,W] x [0,H], outer walls implied
//    "floor_gray": 0.75,                       // grayscale reading of the bare floor, 0..1
//    "line": {"gray": 0.1, "width": 0.03, "closed": true, "points": [[x,y], ...]},
//    "walls": [[x0,y0,x1,y1], ...],
//    "boxes": [[x0,y0,x1,y1], ...],            // axis-aligned solid rectangles
//    "circles": [[x,y,r], ...],                // solid round obstacles
//    "start_poses": [[x,y,heading_deg], ...],
//    "sound": {"x": .., "y": .., "frequency_hz": 440, "level": 0.5}}   // optional
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/sim/geometry.h"

namespace fieldbrain::sim {

struct FloorLine {
  std::vector<Vec2> points;
  double width = 0.03;
  double gray = 0.1;
  bool closed = false;
};

struct SoundSource {
  Vec2 position;
  double frequency_hz = 440.0;
  double level = 0.5;  // volume heard at distance 0, 0..1
};

struct Pose {
  Vec2 position;
  double heading = 0.0;  // radians
};

struct Arena {
  std::string name = "arena";
  double width = 3.0;
  double height = 2.0;
  double floor_gray = 0.75;
  std::optional<FloorLine> line;
  std::vector<Segment> walls;                // the four outer walls first, then the map's own
  std::vector<Segment> box_edges;            // every box as four segments (ray casts)
  std::vector<std::pair<Vec2, Vec2>> boxes;  // min/max corners (filled drawing, containment)
  std::vector<Circle> circles;
  std::vector<Pose> start_poses;
  std::optional<SoundSource> sound;

  // Distance from `origin` along heading `angle` to the first wall or obstacle, capped at
  // max_range (returned when nothing is hit closer).
  double ray_cast(Vec2 origin, double angle, double max_range) const;

  // True when a disc of `radius` at `centre` overlaps a wall or obstacle or leaves the arena.
  bool disc_collides(Vec2 centre, double radius) const;

  // Grayscale reflectance of the floor under point p: the line's gray on the line, the
  // floor's elsewhere.
  double floor_gray_at(Vec2 p) const;
};

void from_json(const nlohmann::json& j, Arena& a);

// Reads and parses a map; throws std::runtime_error naming the file and the problem.
Arena load_arena(const std::string& path);

// The map shipped in configs/ (FIELDBRAIN_SOURCE_DIR/configs/arena_default.json).
std::string default_arena_path();

}  // namespace fieldbrain::sim
