// A synthetic PiCar-X sensor stream: the 12-float layout of the 2025-08-20 client
// (docs/protocol.md, legacy §3.2.1: 3 grayscale, ultrasonic, battery, 7 audio features), with a
// robot driving over a line, towards and away from a wall, on a slowly draining battery.
// Vectors longer than 12 are padded with 0.5 as the client's BrainClient does; shorter ones
// are truncated. Deterministic for a given seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace fieldbrain {

class PicarxStream {
 public:
  PicarxStream(int64_t sensory_dim, uint64_t seed) : dim_(sensory_dim), rng_(seed) {}

  std::vector<float> next() {
    const double t = static_cast<double>(tick_++);
    std::uniform_real_distribution<float> jitter(-0.02f, 0.02f);
    std::vector<float> v(12, 0.0f);
    const double line = std::sin(t * 0.05);  // lateral offset of the line under the car
    for (int i = 0; i < 3; ++i) {
      const double d = line - (i - 1) * 0.6;
      v[i] = static_cast<float>(0.2 + 0.7 * std::exp(-d * d * 4.0)) + jitter(rng_);
    }
    v[3] = static_cast<float>(0.5 + 0.45 * std::sin(t * 0.021));    // ultrasonic 0..1
    v[4] = static_cast<float>(0.84 - 1e-5 * t);                      // battery
    const double volume = 0.05 + 0.04 * std::sin(t * 0.13);
    v[5] = static_cast<float>(volume);
    for (int b = 0; b < 4; ++b) v[6 + b] = static_cast<float>(volume * (1.0 - 0.2 * b));
    v[10] = 0.3f;                                                    // pitch
    v[11] = static_cast<float>(std::max(0.0, (volume - last_volume_) * 5.0));
    last_volume_ = volume;
    for (auto& x : v) x = std::min(1.0f, std::max(0.0f, x));
    v.resize(static_cast<size_t>(dim_), 0.5f);
    return v;
  }

 private:
  int64_t dim_;
  std::mt19937_64 rng_;
  int64_t tick_ = 0;
  double last_volume_ = 0.05;
};

}  // namespace fieldbrain
