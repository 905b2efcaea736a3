// The fixed reward schedule of the rewarded benchmark rows (fieldbrain-bench cpp_fast_reward,
// cpp_reference_reward) and of `fieldbrain --reward`: a slow sinusoid of amplitude 0.5 and
// period 64 cycles, robot b shifted by 5b cycles. |r| crosses the attractor threshold 0.1 both
// ways four times a period and both signs occur, so slots are written (about 7 cycles in 8),
// skipped, of either valence, and reused (8 slots, each written again within ~10 cycles while
// it still pulls): the bank is as busy as a learning robot makes it. Header-only, plain C++.
#pragma once

#include <cmath>
#include <cstdint>

namespace fieldbrain {
namespace bench {

constexpr int64_t kRewardPeriod = 64;

inline float scheduled_reward(int64_t cycle, int64_t robot) {
  const double phase = 2.0 * 3.14159265358979323846 *
                       static_cast<double>((cycle + 5 * robot) % kRewardPeriod) / kRewardPeriod;
  return static_cast<float>(0.5 * std::sin(phase));
}

}  // namespace bench
}  // namespace fieldbrain
