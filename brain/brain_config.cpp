#include "brain/brain_config.h"

#include <stdexcept>

#include <fmt/format.h>

namespace fieldbrain {
namespace {

void check_range(const char* name, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    throw std::invalid_argument(
        fmt::format("brain config: {} = {} is out of range [{}, {}]", name, value, lo, hi));
  }
}

// Reads j[key] into out, naming the key when the JSON type does not fit.
template <typename T>
void read_key(const nlohmann::json& j, const char* key, T& out) {
  try {
    out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("brain config: key \"{}\": {}", key, e.what()));
  }
}

// The config's names of an enum's values, in one table per enum.
template <typename E>
struct EnumName {
  E value;
  const char* name;
};
constexpr EnumName<BrainProfile> kProfiles[] = {{BrainProfile::Fieldbrain, "fieldbrain"},
                                                {BrainProfile::Legacy, "legacy"}};
constexpr EnumName<LegacyClock> kClocks[] = {{LegacyClock::Fixed, "fixed"},
                                             {LegacyClock::Wall, "wall"}};
constexpr EnumName<LegacyPlanner> kPlanners[] = {{LegacyPlanner::Off, "off"},
                                                 {LegacyPlanner::Sync, "sync"}};
constexpr EnumName<LegacyReward> kRewards[] = {{LegacyReward::Drop, "drop"},
                                               {LegacyReward::Append, "append"}};

template <typename E, size_t N>
const char* name_of(const EnumName<E> (&table)[N], E value) {
  for (const auto& e : table) {
    if (e.value == value) return e.name;
  }
  return "?";
}

// Reads the string j[key] into one of the table's values, naming the key and the choices.
template <typename E, size_t N>
void read_enum(const nlohmann::json& j, const char* key, const EnumName<E> (&table)[N], E& out) {
  std::string name;
  read_key(j, key, name);
  std::string choices;
  for (const auto& e : table) {
    if (e.name == name) {
      out = e.value;
      return;
    }
    choices += fmt::format("{}\"{}\"", choices.empty() ? "" : " or ", e.name);
  }
  throw std::invalid_argument(
      fmt::format("brain config: {} = \"{}\" (expected {})", key, name, choices));
}

}  // namespace

const char* to_string(BrainProfile p) { return name_of(kProfiles, p); }
const char* to_string(LegacyClock c) { return name_of(kClocks, c); }
const char* to_string(LegacyPlanner p) { return name_of(kPlanners, p); }
const char* to_string(LegacyReward r) { return name_of(kRewards, r); }

void BrainConfig::validate() const {
  check_range("sensory_dim", sensory_dim, 1, 1024);
  check_range("motor_dim", motor_dim, 1, 1024);
  check_range("resolution", resolution, 8, 128);
  check_range("attractor_capacity", attractor_capacity, 1, 256);
  check_range("telemetry_every", telemetry_every, 1, int64_t{1} << 40);
  if (field_step.empty()) {
    throw std::invalid_argument("brain config: field_step is empty");
  }
  if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0) {
    throw std::invalid_argument(
        fmt::format("brain config: device = \"{}\" (expected \"cpu\" or \"cuda\")", device));
  }
  if (profile == BrainProfile::Legacy && device != "cpu") {
    throw std::invalid_argument(fmt::format(
        "brain config: device = \"{}\" is not available with \"profile\": \"legacy\" (the "
        "original's numbers are reproduced on the CPU only; set \"device\": \"cpu\")",
        device));
  }
  if (profile != BrainProfile::Legacy) {
    const BrainConfig defaults;
    const auto refuse = [](const char* key, const char* value) {
      throw std::invalid_argument(fmt::format(
          "brain config: {} = \"{}\" applies only to \"profile\": \"legacy\"", key, value));
    };
    if (legacy_clock != defaults.legacy_clock) refuse("legacy_clock", to_string(legacy_clock));
    if (legacy_planner != defaults.legacy_planner) {
      refuse("legacy_planner", to_string(legacy_planner));
    }
    if (legacy_reward != defaults.legacy_reward) refuse("legacy_reward", to_string(legacy_reward));
  }
}

void to_json(nlohmann::json& j, const BrainConfig& c) {
  j = nlohmann::json{{"profile", to_string(c.profile)},
                     {"sensory_dim", c.sensory_dim},
                     {"motor_dim", c.motor_dim},
                     {"resolution", c.resolution},
                     {"attractor_capacity", c.attractor_capacity},
                     {"seed", c.seed},
                     {"telemetry_every", c.telemetry_every},
                     {"field_step", c.field_step},
                     {"device", c.device},
                     {"legacy_clock", to_string(c.legacy_clock)},
                     {"legacy_planner", to_string(c.legacy_planner)},
                     {"legacy_reward", to_string(c.legacy_reward)}};
}

void from_json(const nlohmann::json& j, BrainConfig& c) {
  if (!j.is_object()) {
    throw std::invalid_argument("brain config: expected a JSON object");
  }
  BrainConfig out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "sensory_dim") read_key(j, "sensory_dim", out.sensory_dim);
    else if (key == "motor_dim") read_key(j, "motor_dim", out.motor_dim);
    else if (key == "resolution") read_key(j, "resolution", out.resolution);
    else if (key == "attractor_capacity") read_key(j, "attractor_capacity", out.attractor_capacity);
    else if (key == "seed") read_key(j, "seed", out.seed);
    else if (key == "telemetry_every") read_key(j, "telemetry_every", out.telemetry_every);
    else if (key == "field_step") read_key(j, "field_step", out.field_step);
    else if (key == "device") read_key(j, "device", out.device);
    else if (key == "profile") read_enum(j, "profile", kProfiles, out.profile);
    else if (key == "legacy_clock") read_enum(j, "legacy_clock", kClocks, out.legacy_clock);
    else if (key == "legacy_planner") read_enum(j, "legacy_planner", kPlanners, out.legacy_planner);
    else if (key == "legacy_reward") read_enum(j, "legacy_reward", kRewards, out.legacy_reward);
    else throw std::invalid_argument(fmt::format("brain config: unknown key \"{}\"", key));
  }
  out.validate();
  c = out;
}

}  // namespace fieldbrain
