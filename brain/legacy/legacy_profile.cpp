#include "brain/legacy/legacy_profile.h"

#include <chrono>

#include "brain/robot_seed.h"

namespace fieldbrain {

uint32_t legacy_robot_seed(uint64_t config_seed, uint64_t robot_key_hash) {
  return static_cast<uint32_t>(robot_seed(config_seed, robot_key_hash) & 0xFFFFFFFFULL);
}

legacy::LegacyOptions legacy_options(const BrainConfig& config, uint64_t seed) {
  legacy::LegacyOptions o;
  o.sensory_dim = config.sensory_dim;
  o.motor_dim = config.motor_dim;
  o.resolution = config.resolution;
  o.seed = seed;
  o.planner = config.legacy.planner;
  return o;
}

double legacy_clock_seconds(LegacyClock clock, int64_t cycle) {
  if (clock == LegacyClock::Wall) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration<double>(now).count();
  }
  return kLegacyClockStartS + static_cast<double>(cycle) * kLegacyClockStepS;
}

std::vector<double> legacy_input_list(const float* sensors, int64_t sensory_dim, float reward,
                                      LegacyReward rule) {
  std::vector<double> list(sensors, sensors + sensory_dim);
  if (rule == LegacyReward::Append) list.push_back(reward);
  return list;
}

}  // namespace fieldbrain
