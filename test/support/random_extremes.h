// Random finite floats across float32's whole range, for the property tests of what a sensor
// value may be (issue 36; docs/operating.md "What a sensor value may be"). Torch-free.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace fieldbrain::test {

// A finite float of random magnitude: log-uniform from the smallest subnormal (1e-45) up to
// `limit`, either sign, with signed zeros, subnormals and +-limit itself now and then.
inline float random_finite_extreme(std::mt19937_64& rng, float limit) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_real_distribution<double> exponent(-45.0, std::log10(static_cast<double>(limit)));
  const float sign = (rng() & 1) ? -1.0f : 1.0f;
  switch (kind(rng)) {
    case 0: return sign * 0.0f;
    case 1: return sign * limit;
    case 2: return sign * std::numeric_limits<float>::denorm_min() * 3.0f;  // a subnormal
    default: break;
  }
  return sign * std::min(static_cast<float>(std::pow(10.0, exponent(rng))), limit);
}

}  // namespace fieldbrain::test
