// The brain's configuration: the "brain" object of configs/*.json.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "brain/legacy/legacy_config.h"

namespace fieldbrain {

// Which cycle a brain runs, chosen once per server (the config key "profile"):
// - Fieldbrain ("fieldbrain", the default): this project's cycle (docs/cycle.md), batched across
//   robots, CPU or CUDA, with the field step picked by "field_step";
// - Legacy ("legacy"): em-brain's original field brain number for number under the pins of
//   brain/legacy/LEGACY.md (docs/legacy.md): one brain per robot, CPU only.
enum class BrainProfile { Fieldbrain, Legacy };
// The cycle a brain runs: decided once, from "profile" and "field_step", by BrainConfig::cycle()
// (validate() has refused every other spelling). Each has one file that reads top to bottom
// like docs/cycle.md:
// - Reference (brain/cycle_reference.cpp): profile "fieldbrain", field_step "reference",
//   "script" or a .pt path: ATen ops one-to-one with scripts/reference, the field step chosen
//   by field_step_impl();
// - Fused (brain/cycle_fused.cpp): profile "fieldbrain", field_step "fast": the fused operators
//   of brain/FUSED.md, the device part host-free (what brain/cycle_graph.h records on CUDA);
// - Legacy (brain/legacy/): profile "legacy" (field_step is ignored there).
enum class BrainCycle { Reference, Fused, Legacy };
// Which implementation runs step 7 (the field step, brain/field_dynamics.h):
// Aten ("reference": field_step_reference), Script ("script": the built-in TorchScript),
// ScriptFile (any other value: the path of an exported TorchScript .pt), Fused ("fast": the
// fused fieldbrain::field_step operator; only in the Fused cycle, and the only step it runs).
enum class FieldStepImpl { Aten, Script, ScriptFile, Fused };
// The field_step value's meaning. Throws std::invalid_argument (naming the valid values) for a
// value that is none of the names and does not look like a path.
FieldStepImpl parse_field_step(const std::string& field_step);
// The names the config uses ("fieldbrain", "legacy"); the legacy keys' names are
// brain/legacy/legacy_config.h's.
const char* to_string(BrainProfile p);

struct BrainConfig {
  BrainProfile profile = BrainProfile::Fieldbrain;
  int64_t sensory_dim = 24;        // S, 1..1024
  int64_t motor_dim = 4;           // M, 1..1024
  int64_t resolution = 32;         // R, 8..128
  int64_t attractor_capacity = 8;  // A, 1..256
  uint64_t seed = 42;              // with the robot key, seeds each robot's Philox streams
  int64_t telemetry_every = 100;   // deferred-telemetry cadence (cycles), >= 1
  // "reference" | "fast" | "script" | path to a .pt: the config's spelling of two choices,
  // the cycle ("fast": the fused one) and the reference cycle's field step; code asks cycle()
  // and field_step_impl(), never compares this string.
  std::string field_step = "reference";
  std::string device = "cpu";      // "cpu" | "cuda"; "cpu" only with the legacy profile
  // "legacy_clock", "legacy_planner", "legacy_reward": the legacy profile only; their meaning
  // is brain/legacy/legacy_config.h's.
  legacy::LegacyConfig legacy;
  // Threads that step one tick's legacy robots, one robot per thread at a time (each still bit
  // for bit with its run alone); 0: one per CPU core this process may use. 0..1024.
  int64_t legacy_threads = 0;                           // legacy profile only

  // Throws std::invalid_argument naming the first field out of range.
  // Keys that mean nothing to the chosen profile: the legacy profile ignores attractor_capacity,
  // telemetry_every and field_step (every config template and the server's defaults carry
  // them); the legacy_* keys set away from their defaults without "profile": "legacy" are
  // refused (they would silently do nothing).
  void validate() const;

  // The cycle this config runs and its field step (see BrainCycle, FieldStepImpl). Throw
  // std::invalid_argument on an invalid field_step, as validate() does.
  BrainCycle cycle() const;
  FieldStepImpl field_step_impl() const;
};

// Unknown keys are refused (std::invalid_argument naming the key): a typo in a config file
// must not silently fall back to a default. Missing keys keep their defaults; the result is
// validated.
void to_json(nlohmann::json& j, const BrainConfig& c);
void from_json(const nlohmann::json& j, BrainConfig& c);

}  // namespace fieldbrain

