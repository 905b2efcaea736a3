#include "app/sim/sim_robot.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fieldbrain::sim {

float progress_reward(const StepOutcome& last, const PicarxGeometry& g) {
  const double progress = std::clamp(last.progress / max_step_distance(g), -1.0, 1.0);
  return static_cast<float>(std::clamp(progress - (last.collided ? 1.0 : 0.0), -1.0, 1.0));
}

std::vector<float> six_motors(const std::vector<float>& motors) {
  std::vector<float> m(motors.begin(), motors.begin() + std::min<size_t>(motors.size(), 6));
  m.resize(6, 0.0f);
  return m;
}

Pose start_pose(const Arena& arena, const PicarxGeometry& g, int index, uint64_t seed) {
  const size_t n = arena.start_poses.size();
  const Pose base = arena.start_poses[size_t(index) % n];
  if (arena.disc_collides(base.position, g.radius)) {
    throw std::invalid_argument("start pose " + std::to_string(index % n) + " of map '" +
                                arena.name + "' overlaps a wall or obstacle");
  }
  if (size_t(index) < n) return base;
  std::mt19937_64 rng(seed * 1000003u + uint64_t(index));
  std::uniform_real_distribution<double> offset(-0.5, 0.5), turn(-3.14159, 3.14159);
  for (int attempt = 0; attempt < 200; ++attempt) {
    Pose p{base.position + Vec2{offset(rng), offset(rng)}, turn(rng)};
    if (!arena.disc_collides(p.position, g.radius)) return p;
  }
  return base;  // crowded map: share the pose (robots do not collide with each other)
}

SimRobot::SimRobot(const Arena& arena, PicarxGeometry geometry, Pose start, uint64_t seed,
                   SensorNoise noise)
    : arena_(arena), geometry_(geometry), noise_(noise), rng_(seed) {
  car_.pose = start;
  path_.push_back(start.position);
  visit(start.position);
}

std::vector<float> SimRobot::sense() {
  return fieldbrain::sim::sense(geometry_, arena_, car_, battery_, audio_, noise_, rng_);
}

StepOutcome SimRobot::act(const std::vector<float>& motors) {
  const std::vector<float> m = six_motors(motors);
  for (float v : m) {
    abs_motor_sum_ += std::isfinite(v) ? std::min(1.0, double(std::abs(v))) : 0.0;
  }
  motor_samples_ += 6;
  const MotorCommand cmd = interpret_motors(m);
  last_ = step_car(geometry_, arena_, cmd, car_);
  battery_.drain(cmd, geometry_.dt);
  if (last_.collided) ++collisions_;
  distance_ += last_.moved;
  path_.push_back(car_.pose.position);
  visit(car_.pose.position);
  return last_;
}

void SimRobot::visit(Vec2 p) {
  const long long cx = static_cast<long long>(std::floor(p.x / kExploreCell));
  const long long cy = static_cast<long long>(std::floor(p.y / kExploreCell));
  cells_.insert(cx * 1000003LL + cy);
}

}  // namespace fieldbrain::sim
