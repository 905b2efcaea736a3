#include "app/sim/picarx_sensors.h"

#include <algorithm>
#include <cmath>

namespace fieldbrain::sim {

void Battery::drain(const MotorCommand& cmd, double dt) {
  // Idle electronics plus a share per unit of duty: ~0.25 V per 10 minutes idle.
  const double load = 0.0004 + 0.004 * (std::abs(cmd.left_duty) + std::abs(cmd.right_duty));
  volts = std::max(6.0, volts - load * dt);
}

std::array<Vec2, 3> gray_sensor_positions(const PicarxGeometry& g, const Pose& pose) {
  std::array<Vec2, 3> out;
  const double lateral[3] = {-g.gray_spacing, 0.0, g.gray_spacing};  // right, centre, left
  for (int i = 0; i < 3; ++i) {
    out[i] = pose.position + body_to_world(pose.heading, g.gray_forward, lateral[i]);
  }
  return out;
}

Vec2 ultrasonic_position(const PicarxGeometry& g, const Pose& pose) {
  return pose.position + body_to_world(pose.heading, g.ultrasonic_forward, 0.0);
}

std::vector<float> sense(const PicarxGeometry& g, const Arena& arena, const CarState& car,
                         const Battery& battery, AudioState& audio, const SensorNoise& noise,
                         std::mt19937_64& rng) {
  std::vector<float> s(kSensorCount, 0.0f);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const auto gray = gray_sensor_positions(g, car.pose);
  for (int i = 0; i < 3; ++i) {
    double v = arena.floor_gray_at(gray[i]);
    if (noise.gray > 0) v += noise.gray * gauss(rng);
    s[kGrayRight + i] = static_cast<float>(std::clamp(v, 0.0, 1.0));
  }
  const double d =
      arena.ray_cast(ultrasonic_position(g, car.pose), car.pose.heading, g.ultrasonic_range);
  double u = d / g.ultrasonic_range;
  if (noise.ultrasonic > 0) u += noise.ultrasonic * gauss(rng);
  s[kUltrasonic] = static_cast<float>(std::clamp(u, 0.0, 1.0));
  s[kBattery] = static_cast<float>(battery.volts / 10.0);

  double volume = 0.0;
  if (arena.sound) {
    const double dist = length(car.pose.position - arena.sound->position);
    volume = std::clamp(arena.sound->level / (1.0 + dist * dist), 0.0, 1.0);
    const double f = arena.sound->frequency_hz;
    const int band = f < 250 ? 0 : f < 1000 ? 1 : f < 4000 ? 2 : 3;
    s[kBand0 + band] = static_cast<float>(volume);
    if (volume > 0.01) {
      s[kPitch] =
          static_cast<float>(std::log10(std::clamp(f, 20.0, 8000.0) / 20.0) / std::log10(400.0));
    }
  }
  s[kVolume] = static_cast<float>(volume);
  s[kOnset] = static_cast<float>(std::max(0.0, volume - audio.previous_volume) * 5.0);
  audio.previous_volume = volume;
  return s;
}

}  // namespace fieldbrain::sim
