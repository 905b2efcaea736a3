// One robot's brain of either profile, as fieldbrain.Brain holds it (docs/python.md). The two
// profiles differ in everything the Python class touches (the cycle's inputs, the telemetry,
// the field's layout, the save format), so each is its own type, chosen once when the brain is
// built or loaded; the binding (brain_bindings.cpp) never asks which profile it holds.
// Torch-only: nothing here knows Python.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/robot_key.h"

namespace fieldbrain::python {

class ProfileBrain {
 public:
  virtual ~ProfileBrain() = default;

  // One cycle. `sensors` is a float32 [S] tensor on the CPU or on the brain's device (checked by
  // the caller), `reward` a finite float (checked here, as the brain checks its inputs). Returns
  // the motors [M] float32 on the CPU. Throws std::invalid_argument, state untouched, on a bad
  // input (non-finite values, the legacy profile's range [-10, 10]).
  virtual torch::Tensor step(const torch::Tensor& sensors, float reward) = 0;
  // The same cycle `cycles` times from C++ on the same input; returns the CPU seconds of the
  // calling thread it took (the bench's "C++ cycle" row, timed on the very brain the Python
  // calls step).
  virtual double time_native(const torch::Tensor& sensors, int64_t cycles) = 0;

  // The telemetry the server reports for this robot (same keys).
  virtual nlohmann::json telemetry() = 0;
  // The field: a view of the state, not a copy ([64,R,R,R] fieldbrain, [R,R,R,64] legacy).
  virtual torch::Tensor field() const = 0;
  virtual int64_t cycle() const = 0;
  virtual const BrainConfig& config() const = 0;
  // The brain's torch::nn::Module (its state as named buffers).
  virtual std::shared_ptr<torch::nn::Module> module() = 0;

  // The server's save format (brain/persistence.h): atomic, checksummed.
  virtual void save(const std::string& path) const = 0;
  // Throws std::runtime_error naming the file and the problem; the state is untouched then.
  virtual void load(const std::string& path) = 0;
};

// `config` is validated (std::invalid_argument naming the key). `robot`: the robot key the
// server would serve this brain under (its seed derives from it as the server's does); none:
// key 0 for the fieldbrain profile, and config.seed is the original's seed as given for the
// legacy profile.
std::unique_ptr<ProfileBrain> make_profile_brain(const BrainConfig& config,
                                                 const std::optional<std::string>& robot);

// A brain rebuilt from a save of either profile (the server's files included): its profile,
// sizes, config and robot key come from the file. `overrides` (a JSON object of config keys)
// may change what a save does not fix (device, field_step, telemetry_every, legacy_clock,
// legacy_reward); a key that contradicts the save (sizes) is refused by the brain's load.
std::unique_ptr<ProfileBrain> load_profile_brain(const std::string& path,
                                                 const nlohmann::json& overrides);

}  // namespace fieldbrain::python
