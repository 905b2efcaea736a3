// The brain's configuration: the "brain" object of configs/*.json.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace fieldbrain {

// Which cycle a brain runs, chosen once per server (the config key "profile"):
// - Fieldbrain ("fieldbrain", the default): this project's cycle (docs/cycle.md), batched across
//   robots, CPU or CUDA, with the field step picked by "field_step";
// - Legacy ("legacy"): em-brain's original field brain number for number under the pins of
//   brain/legacy/LEGACY.md (docs/legacy.md): one brain per robot, CPU only.
enum class BrainProfile { Fieldbrain, Legacy };
// The legacy profile's clock (P3 of the profiling notes): Fixed gives cycle n the time
// kLegacyClockStartS + n * kLegacyClockStepS, so a run is reproducible and matches the pinned
// original; Wall reads the system clock, as em-brain's own server does.
enum class LegacyClock { Fixed, Wall };
// The start is not 0 because the original tests some timestamps for truthiness; it is
// run_original.py's default t0, so a fixed-clock robot and the pinned original agree.
inline constexpr double kLegacyClockStepS = 0.05;
inline constexpr double kLegacyClockStartS = 1000.0;
// The original's strategic planner (P4): Off drops its requests (closest to the real server,
// where a discovery never arrives within hundreds of cycles); Sync runs it in the cycle.
enum class LegacyPlanner { Off, Sync };
// How a robot's reward reaches the original's input list, which reads a reward only when the
// list is longer than S: Drop (as em-brain's server, where the list is always the S sensors and
// the reward never arrives) or Append (the list is the S sensors and the reward, 0 when the
// robot sent none, every cycle).
enum class LegacyReward { Drop, Append };

// The names the config uses ("fieldbrain", "legacy", "fixed", "wall", "off", "sync", "drop",
// "append").
const char* to_string(BrainProfile p);
const char* to_string(LegacyClock c);
const char* to_string(LegacyPlanner p);
const char* to_string(LegacyReward r);

struct BrainConfig {
  BrainProfile profile = BrainProfile::Fieldbrain;
  int64_t sensory_dim = 24;        // S, 1..1024
  int64_t motor_dim = 4;           // M, 1..1024
  int64_t resolution = 32;         // R, 8..128
  int64_t attractor_capacity = 8;  // A, 1..256
  uint64_t seed = 42;              // with the robot key, seeds each robot's Philox streams
  int64_t telemetry_every = 100;   // deferred-telemetry cadence (cycles), >= 1
  std::string field_step = "reference";  // "reference" | "fast" | "script" | path to a .pt
  std::string device = "cpu";      // "cpu" | "cuda"; "cpu" only with the legacy profile
  LegacyClock legacy_clock = LegacyClock::Fixed;        // legacy profile only
  LegacyPlanner legacy_planner = LegacyPlanner::Off;    // legacy profile only
  LegacyReward legacy_reward = LegacyReward::Drop;      // legacy profile only

  // Throws std::invalid_argument naming the first field out of range.
  // Keys that mean nothing to the chosen profile: the legacy profile ignores attractor_capacity,
  // telemetry_every and field_step (every config template and the server's defaults carry
  // them); the legacy_* keys set away from their defaults without "profile": "legacy" are
  // refused (they would silently do nothing).
  void validate() const;
};

// Unknown keys are refused (std::invalid_argument naming the key): a typo in a config file
// must not silently fall back to a default. Missing keys keep their defaults; the result is
// validated.
void to_json(nlohmann::json& j, const BrainConfig& c);
void from_json(const nlohmann::json& j, BrainConfig& c);

}  // namespace fieldbrain
