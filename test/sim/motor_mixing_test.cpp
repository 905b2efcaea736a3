// The 6-motor interpretation of the HEAD PiCar-X client (docs/protocol.md, legacy §3.3), with the
// expected values computed here from the spec's formulas, not from the code under test.
#include "test/support/catch.h"
#include <cmath>
#include <random>

#include "app/sim/picarx_motors.h"

using fieldbrain::sim::interpret_motors;

namespace {

// §3.3: left = thrust - 0.5*turn, right = thrust + 0.5*turn; clamp to +-1; then
// sign * |x|^1.5 * max_speed (0.8).
double spec_duty(double thrust, double turn, bool left) {
  double x = left ? thrust - 0.5 * turn : thrust + 0.5 * turn;
  x = std::max(-1.0, std::min(1.0, x));
  return (x >= 0 ? 1.0 : -1.0) * std::pow(std::fabs(x), 1.5) * 0.8;
}

}  // namespace

TEST_CASE("Motor mixing matches the §3.3 formulas", "[sim]") {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> m(6);
    for (auto& v : m) v = u(rng);
    const auto c = interpret_motors(m);
    CHECK(c.left_duty == Approx(spec_duty(m[0], m[1], true)).margin(1e-6));
    CHECK(c.right_duty == Approx(spec_duty(m[0], m[1], false)).margin(1e-6));
    CHECK(c.steering_deg == Approx(m[2] * 30.0).margin(1e-5));
    CHECK(c.pan_deg == Approx(m[3] * 90.0).margin(1e-5));
    CHECK(c.audio_frequency == Approx(m[4]).margin(1e-6));
    CHECK(c.audio_volume == Approx(m[5]).margin(1e-6));
  }
}

TEST_CASE("Mixing clamps the wheel sum before the power curve", "[sim]") {
  // thrust 0.9, turn 0.8: right = 1.3 -> 1 -> 0.8 duty; left = 0.5 -> 0.5^1.5 * 0.8.
  const auto c = interpret_motors({0.9f, 0.8f, 0, 0, 0, 0});
  CHECK(c.right_duty == Approx(0.8));
  CHECK(c.left_duty == Approx(std::pow(0.5, 1.5) * 0.8).margin(1e-6));
  const auto r = interpret_motors({-0.9f, 0.8f, 0, 0, 0, 0});
  CHECK(r.left_duty == Approx(-0.8));
}

TEST_CASE("A short reply is padded with zeros and extra values are ignored", "[sim]") {
  const auto c = interpret_motors({0.5f});
  CHECK(c.left_duty == Approx(std::pow(0.5, 1.5) * 0.8));
  CHECK(c.right_duty == Approx(c.left_duty));
  CHECK(c.steering_deg == 0.0);
  CHECK(c.pan_deg == 0.0);
  const auto e = interpret_motors({0, 0, 0.5f, 0, 0, 0, 0.9f, 0.9f});
  CHECK(e.steering_deg == Approx(15.0));
  const auto none = interpret_motors({});
  CHECK(none.left_duty == 0.0);
}

TEST_CASE("Non-finite motor values stop the wheels instead of running away", "[sim]") {
  const auto c = interpret_motors({NAN, INFINITY, NAN, 0, 0, 0});
  CHECK(c.left_duty == 0.0);
  CHECK(c.right_duty == 0.0);
  CHECK(c.steering_deg == 0.0);
}
