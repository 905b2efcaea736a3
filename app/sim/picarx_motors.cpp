#include "app/sim/picarx_motors.h"

#include <algorithm>
#include <cmath>

namespace fieldbrain::sim {
namespace {

double at(const std::vector<float>& v, size_t i) {
  if (i >= v.size() || !std::isfinite(v[i])) return 0.0;
  return std::clamp(static_cast<double>(v[i]), -1.0, 1.0);
}

double duty(double x) {
  x = std::clamp(x, -1.0, 1.0);
  const double shaped = std::pow(std::abs(x), 1.5);
  return (x < 0 ? -shaped : shaped) * kMaxSpeedDuty;
}

}  // namespace

MotorCommand interpret_motors(const std::vector<float>& motors) {
  const double thrust = at(motors, 0), turn = at(motors, 1);
  MotorCommand c;
  c.left_duty = duty(thrust - 0.5 * turn);
  c.right_duty = duty(thrust + 0.5 * turn);
  c.steering_deg = at(motors, 2) * kSteeringRangeDeg;
  c.pan_deg = at(motors, 3) * kPanRangeDeg;
  c.audio_frequency = at(motors, 4);
  c.audio_volume = at(motors, 5);
  return c;
}

}  // namespace fieldbrain::sim
