// How the 2025-08-20 PiCar-X client turns the brain's 6 motor values into hardware commands
// (docs/protocol.md, legacy §3.3, `brain_to_hardware_commands`):
//   [0] thrust, [1] turn: left = thrust - 0.5*turn, right = thrust + 0.5*turn, each clamped to
//       [-1, 1], then sign(x)*|x|^1.5 * max_speed (0.8) -> PWM duty in [-0.8, 0.8]
//   [2] steering servo: x 30 degrees;  [3] camera pan: x 90 degrees (tilt held centred)
//   [4] audio frequency control, [5] audio volume: passed through to the audio HAL.
// A short reply is padded with 0.0 up to 6; extra values are ignored.
#pragma once

#include <vector>

namespace fieldbrain::sim {

constexpr double kMaxSpeedDuty = 0.8;  // the client's max_speed
constexpr double kSteeringRangeDeg = 30.0;
constexpr double kPanRangeDeg = 90.0;

struct MotorCommand {
  double left_duty = 0.0;  // -0.8..0.8
  double right_duty = 0.0;
  double steering_deg = 0.0;  // positive steers to the right (SunFounder's servo convention)
  double pan_deg = 0.0;
  double audio_frequency = 0.0;
  double audio_volume = 0.0;
};

// Non-finite values are treated as 0 (the car stops rather than running away); values beyond
// [-1, 1] are clamped as the servos would be.
MotorCommand interpret_motors(const std::vector<float>& motors);

}  // namespace fieldbrain::sim
