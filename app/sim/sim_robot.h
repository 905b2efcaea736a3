// One simulated PiCar-X in an arena: its body, battery and sensors, and the running record
// of what it did (path, distance, collisions, grid cells visited). Not thread-safe; each
// robot is driven by one thread.
#pragma once

#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "app/sim/arena.h"
#include "app/sim/picarx_body.h"
#include "app/sim/picarx_sensors.h"

namespace fieldbrain::sim {

constexpr double kExploreCell = 0.1;  // m; "area explored" counts cells of this size visited

// The reward sent as the 13th value: forward progress of the last cycle as a share of the
// fastest possible step (-1..1), minus 1 when that cycle hit something; clamped to [-1, 1].
float progress_reward(const StepOutcome& last, const PicarxGeometry& g);

// Pads with 0.0 or truncates to the 6 motors the client uses (§3.3).
std::vector<float> six_motors(const std::vector<float>& motors);

// Start pose for robot `index`: the map's start poses in turn; robots beyond them are placed
// at random free spots near one (seeded, so a run is reproducible). Throws when the map's
// pose itself collides.
Pose start_pose(const Arena& arena, const PicarxGeometry& g, int index, uint64_t seed);

class SimRobot {
 public:
  SimRobot(const Arena& arena, PicarxGeometry geometry, Pose start, uint64_t seed,
           SensorNoise noise);

  std::vector<float> sense();
  // Applies a motor reply (any length; padded/truncated to 6) for one cycle.
  StepOutcome act(const std::vector<float>& motors);

  const CarState& car() const { return car_; }
  const std::vector<Vec2>& path() const { return path_; }
  const StepOutcome& last() const { return last_; }
  const PicarxGeometry& geometry() const { return geometry_; }
  long long collisions() const { return collisions_; }
  double distance() const { return distance_; }
  size_t cells_visited() const { return cells_.size(); }
  double mean_abs_motor() const { return motor_samples_ ? abs_motor_sum_ / motor_samples_ : 0.0; }

 private:
  void visit(Vec2 p);

  const Arena& arena_;
  PicarxGeometry geometry_;
  SensorNoise noise_;
  std::mt19937_64 rng_;
  CarState car_;
  Battery battery_;
  AudioState audio_;
  StepOutcome last_;
  std::vector<Vec2> path_;
  std::unordered_set<long long> cells_;
  long long collisions_ = 0;
  double distance_ = 0.0;
  double abs_motor_sum_ = 0.0;
  long long motor_samples_ = 0;
};

}  // namespace fieldbrain::sim
