// numpy's legacy RandomState (numpy/random/src/mt19937/mt19937.c, distributions.c
// random_bounded_uint64_fill with use_masked = true, as RandomState.randint calls it).
#include "brain/legacy/numpy_random.h"

#include <stdexcept>
#include <string>

namespace fieldbrain::legacy {
namespace {
constexpr int kN = NumpyRandomState::kStateLength;
constexpr int kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;

// numpy's gen_mask: the smallest 2^k - 1 that covers max.
uint64_t gen_mask(uint64_t max) {
  uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}
}  // namespace

void NumpyRandomState::seed(uint32_t s) {
  // mt19937_seed: init_genrand
  key_[0] = s;
  for (int i = 1; i < kN; ++i) {
    const uint32_t prev = key_[size_t(i - 1)];
    key_[size_t(i)] = 1812433253U * (prev ^ (prev >> 30)) + uint32_t(i);
  }
  pos_ = kN;
}

void NumpyRandomState::generate() {
  // mt19937_gen
  int i = 0;
  for (; i < kN - kM; ++i) {
    const uint32_t y = (key_[size_t(i)] & kUpperMask) | (key_[size_t(i + 1)] & kLowerMask);
    key_[size_t(i)] = key_[size_t(i + kM)] ^ (y >> 1) ^ (-(y & 1U) & kMatrixA);
  }
  for (; i < kN - 1; ++i) {
    const uint32_t y = (key_[size_t(i)] & kUpperMask) | (key_[size_t(i + 1)] & kLowerMask);
    key_[size_t(i)] = key_[size_t(i + (kM - kN))] ^ (y >> 1) ^ (-(y & 1U) & kMatrixA);
  }
  const uint32_t y = (key_[size_t(kN - 1)] & kUpperMask) | (key_[0] & kLowerMask);
  key_[size_t(kN - 1)] = key_[size_t(kM - 1)] ^ (y >> 1) ^ (-(y & 1U) & kMatrixA);
  pos_ = 0;
}

uint32_t NumpyRandomState::next_uint32() {
  if (pos_ == kN) generate();
  uint32_t y = key_[size_t(pos_++)];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

uint64_t NumpyRandomState::next_uint64() {
  const uint64_t hi = next_uint32();
  return (hi << 32) | next_uint32();
}

int64_t NumpyRandomState::randint(int64_t low, int64_t high) {
  if (low >= high) {
    throw std::invalid_argument("randint: low >= high (" + std::to_string(low) +
                                " >= " + std::to_string(high) + ")");
  }
  // numpy: rng = high - 1 - low as uint64, off = low; the value is off + bounded draw.
  const uint64_t rng = uint64_t(high) - 1U - uint64_t(low);
  if (rng == 0) return low;
  uint64_t value = 0;
  if (rng <= 0xFFFFFFFFULL) {
    if (rng == 0xFFFFFFFFULL) {
      value = next_uint32();
    } else {
      const uint32_t mask = uint32_t(gen_mask(rng));
      uint32_t v;
      while ((v = (next_uint32() & mask)) > uint32_t(rng)) {
      }
      value = v;
    }
  } else if (rng == 0xFFFFFFFFFFFFFFFFULL) {
    value = next_uint64();
  } else {
    const uint64_t mask = gen_mask(rng);
    uint64_t v;
    while ((v = (next_uint64() & mask)) > rng) {
    }
    value = v;
  }
  return int64_t(uint64_t(low) + value);
}

double NumpyRandomState::random_sample() {
  const uint32_t a = next_uint32() >> 5, b = next_uint32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

void NumpyRandomState::set_state(const std::array<uint32_t, kStateLength>& key, int pos) {
  if (pos < 0 || pos > kN) {
    throw std::invalid_argument("NumpyRandomState::set_state: pos " + std::to_string(pos) +
                                " outside [0, 624]");
  }
  key_ = key;
  pos_ = pos;
}

}  // namespace fieldbrain::legacy
