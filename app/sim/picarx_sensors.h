// The 12 floats the 2025-08-20 PiCar-X client sends each cycle (docs/protocol.md, legacy §3.2.1),
// computed from the simulated car and arena:
//   0..2  grayscale right (A0), centre (A1), left (A2): floor reflectance under each sensor
//   3     ultrasonic: min(distance / 4 m, 1), a ray cast straight ahead from the sensor
//   4     battery: volts / 10 (the client's raw/4095 with adc_to_voltage_multiplier 10)
//   5     audio volume, 6..9 band levels (20-250, 250-1k, 1k-4k, 4k-8k Hz),
//   10    pitch log10(clamp(f,20,8000)/20)/log10(400), 11 onset max(0, vol - prev)*5.
// Audio is all zeros unless the arena has a sound source: then the source's volume falls off
// with distance (level / (1 + d^2), d in metres), its band carries that volume, pitch is its
// frequency while audible.
#pragma once

#include <array>
#include <random>
#include <vector>

#include "app/sim/arena.h"
#include "app/sim/picarx_body.h"

namespace fieldbrain::sim {

constexpr int kSensorCount = 12;
constexpr int kMotorCount = 6;

enum SensorIndex {
  kGrayRight = 0,
  kGrayCentre = 1,
  kGrayLeft = 2,
  kUltrasonic = 3,
  kBattery = 4,
  kVolume = 5,
  kBand0 = 6,
  kPitch = 10,
  kOnset = 11,
};

struct SensorNoise {
  double gray = 0.0;        // standard deviation added to each grayscale reading
  double ultrasonic = 0.0;  // ... to the ultrasonic reading
};

// Battery model: a 2S pack starts near full and sags with motor use.
struct Battery {
  double volts = 8.0;
  void drain(const MotorCommand& cmd, double dt);
};

// Audio features carry one cycle of memory (the onset).
struct AudioState {
  double previous_volume = 0.0;
};

// World positions of the three grayscale sensors, in wire order (right, centre, left).
std::array<Vec2, 3> gray_sensor_positions(const PicarxGeometry& g, const Pose& pose);
// World position of the ultrasonic sensor.
Vec2 ultrasonic_position(const PicarxGeometry& g, const Pose& pose);

// Senses one cycle. `rng` is used only when `noise` is non-zero.
std::vector<float> sense(const PicarxGeometry& g, const Arena& arena, const CarState& car,
                         const Battery& battery, AudioState& audio, const SensorNoise& noise,
                         std::mt19937_64& rng);

}  // namespace fieldbrain::sim
