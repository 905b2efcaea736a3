// The legacy profile's configuration: the "brain" keys only "profile": "legacy" reads
// (legacy_clock, legacy_planner, legacy_reward; docs/configuration.md), their names, and how
// they are read, written and refused. BrainConfig holds one LegacyConfig (BrainConfig::legacy),
// so the keys stay where a config file writes them while their meaning lives here, beside the
// brain they configure.
//
// Header-only and torch-free: brain/brain_config.h includes it (the config library does not
// link the legacy one). Everything else outside brain/legacy/ reaches the legacy profile through
// its one entry header, brain/legacy/legacy_profile.h.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "brain/config_reader.h"
#include "brain/legacy/legacy_cpu.h"
#include "brain/legacy/planner_mode.h"

namespace fieldbrain {

// The legacy profile's clock (P3 of the profiling notes): Fixed gives cycle n the time
// kLegacyClockStartS + n * kLegacyClockStepS, so a run is reproducible and matches the pinned
// original; Wall reads the system clock, as em-brain's own server does.
enum class LegacyClock { Fixed, Wall };
// The start is not 0 because the original tests some timestamps for truthiness; it is
// run_original.py's default t0, so a fixed-clock robot and the pinned original agree.
inline constexpr double kLegacyClockStepS = 0.05;
inline constexpr double kLegacyClockStartS = 1000.0;
// How a robot's reward reaches the original's input list, which reads a reward only when the
// list is longer than S: Drop (as em-brain's server, where the list is always the S sensors and
// the reward never arrives) or Append (the list is the S sensors and the reward, 0 when the
// robot sent none, every cycle).
enum class LegacyReward { Drop, Append };
// The original's strategic planner (P4): LegacyPlanner (brain/legacy/planner_mode.h).

// The config's names of each value (config::read_choice lists them in errors).
inline constexpr config::Choice<LegacyClock> kLegacyClockNames[] = {{"fixed", LegacyClock::Fixed},
                                                                    {"wall", LegacyClock::Wall}};
inline constexpr config::Choice<LegacyReward> kLegacyRewardNames[] = {
    {"drop", LegacyReward::Drop}, {"append", LegacyReward::Append}};

// "fixed", "wall", "off", "sync", "async", "drop", "append".
inline const char* to_string(LegacyClock c) { return config::choice_name(c, kLegacyClockNames); }
inline const char* to_string(LegacyPlanner p) { return planner_mode_name(p); }
inline const char* to_string(LegacyReward r) { return config::choice_name(r, kLegacyRewardNames); }

namespace legacy {

// The legacy keys of the "brain" object; only "profile": "legacy" reads them.
struct LegacyConfig {
  LegacyClock clock = LegacyClock::Fixed;      // "legacy_clock"
  LegacyPlanner planner = LegacyPlanner::Off;  // "legacy_planner"
  LegacyReward reward = LegacyReward::Drop;    // "legacy_reward"
};

// The keys, as check_known_keys lists them.
inline const char* const kLegacyConfigKeys[] = {"legacy_clock", "legacy_planner", "legacy_reward"};

// Reads the keys `brain` has into `out` (std::invalid_argument naming prefix + key and the
// valid values for a bad one); missing keys keep out's values.
inline void read_legacy_keys(const nlohmann::json& brain, const std::string& prefix,
                             LegacyConfig& out) {
  config::read_choice(brain, prefix, "legacy_clock", out.clock, kLegacyClockNames);
  config::read_choice(brain, prefix, "legacy_planner", out.planner, kLegacyPlannerNames);
  config::read_choice(brain, prefix, "legacy_reward", out.reward, kLegacyRewardNames);
}

// Adds every key, defaults included, to the "brain" object `j`.
inline void write_legacy_keys(nlohmann::json& j, const LegacyConfig& c) {
  j["legacy_clock"] = to_string(c.clock);
  j["legacy_planner"] = to_string(c.planner);
  j["legacy_reward"] = to_string(c.reward);
}

// For a config of another profile: a key set away from its default would silently do nothing,
// so it is refused (std::invalid_argument naming prefix + key).
inline void refuse_legacy_keys(const LegacyConfig& c, const std::string& prefix) {
  const LegacyConfig defaults;
  const auto refuse = [&](const char* key, const char* value) {
    throw std::invalid_argument("config key '" + prefix + key + "' is \"" + value +
                                "\": it applies only to \"profile\": \"legacy\"");
  };
  if (c.clock != defaults.clock) refuse("legacy_clock", to_string(c.clock));
  if (c.planner != defaults.planner) refuse("legacy_planner", to_string(c.planner));
  if (c.reward != defaults.reward) refuse("legacy_reward", to_string(c.reward));
}

// For "profile": "legacy" on a CPU without AVX2 and FMA (legacy_cpu.h): refused at start-up
// (std::invalid_argument naming prefix + "profile") rather than stopping with SIGILL later.
inline void refuse_cpu_without_legacy_stencils(const std::string& prefix) {
  if (cpu_runs_legacy_stencils()) return;
  throw std::invalid_argument(
      "config key '" + prefix +
      "profile' is \"legacy\": this CPU lacks AVX2 and FMA, which the legacy profile's diffusion "
      "stencils need to reproduce the original's roundings (use \"profile\": \"fieldbrain\")");
}

}  // namespace legacy
}  // namespace fieldbrain
