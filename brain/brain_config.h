// The brain's configuration: the "brain" object of configs/*.json.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace fieldbrain {

struct BrainConfig {
  int64_t sensory_dim = 24;        // S, 1..1024
  int64_t motor_dim = 4;           // M, 1..1024
  int64_t resolution = 32;         // R, 8..128
  int64_t attractor_capacity = 8;  // A, 1..256
  uint64_t seed = 42;              // with the robot key, seeds each robot's Philox streams
  int64_t telemetry_every = 100;   // deferred-telemetry cadence (cycles), >= 1
  std::string field_step = "reference";  // "reference" | "fast" | "script" | path to a .pt
  std::string device = "cpu";      // "cpu" | "cuda"

  // Throws std::invalid_argument naming the first field out of range.
  void validate() const;
};

// Unknown keys are refused (std::invalid_argument naming the key): a typo in a config file
// must not silently fall back to a default. Missing keys keep their defaults; the result is
// validated.
void to_json(nlohmann::json& j, const BrainConfig& c);
void from_json(const nlohmann::json& j, BrainConfig& c);

}  // namespace fieldbrain
