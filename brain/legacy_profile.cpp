#include "brain/legacy_profile.h"

#include <chrono>

#include "brain/field_brain.h"

namespace fieldbrain {

uint32_t legacy_robot_seed(uint64_t config_seed, uint64_t robot_key_hash) {
  return static_cast<uint32_t>(robot_seed(config_seed, robot_key_hash) & 0xFFFFFFFFULL);
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

std::string saved_profile(const nlohmann::json& archive_meta) {
  if (!archive_meta.is_object()) return "";
  const auto named = [](const nlohmann::json& j) {
    const auto it = j.find("profile");
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (std::string p = named(archive_meta); !p.empty()) return p;
  const auto config = archive_meta.find("config");
  if (config != archive_meta.end() && config->is_object()) {
    if (std::string p = named(*config); !p.empty()) return p;
  }
  if (archive_meta.value("format", "") == "fieldbrain-brain")
    return to_string(BrainProfile::Fieldbrain);
  return "";
}

}  // namespace fieldbrain
