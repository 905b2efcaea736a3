// The legacy profile's brain (brain/legacy/LEGACY.md): em-brain's field brain
// (UnifiedFieldBrain.process_robot_cycle, commit ef2bdb8, as its server's factory builds it)
// reproduced number for number on the CPU under the pins of the profiling notes: its own
// seeded generators, the clock passed in, the planner's discovery off or on the cycle's thread
// (LegacyPlanner::Sync); LegacyPlanner::Async runs it on a worker thread, as the original's
// server does, and is not reproducible.
//
// Guarantees:
//  - Construction draws exactly the original's construction draws (torch: the field, the wave
//    vectors, the dynamics channels, the four xavier weights; numpy: n_waves) from generators
//    owned by this brain and seeded with options.seed; the process-wide generators are untouched.
//  - step() runs one process_robot_cycle on float32 CPU tensors and returns the M motors as the
//    original's Python floats; it allocates per cycle (host-driven port, not a fused kernel).
//  - Bad input (a length other than S or S+1, a non-finite value, a value outside [-10, 10], as
//    the original's validate_list_input), or of another length than the first cycle's (which
//    makes the original's cycle fail half-way), throws std::invalid_argument before any state
//    changes.
//  - save()/load(): the whole state (field, every part's tensors, host scalars, deques and
//    dicts in order, the torch generator's state with its spare normal, numpy's state), so a
//    loaded brain continues exactly as the saved one would. load() leaves the brain untouched
//    when it throws.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brain/legacy/planner_mode.h"

namespace fieldbrain::legacy {

class LegacyCycle;
class NumpyRandomState;

struct LegacyOptions {
  int64_t sensory_dim = 24, motor_dim = 4, resolution = 32;
  uint64_t seed = 42;  // torch.manual_seed / np.random.seed / random.seed value (P1)
  LegacyPlanner planner = LegacyPlanner::Off;  // P4: the strategic planner's mode
};

class LegacyBrainImpl : public torch::nn::Module {
 public:
  // Throws std::invalid_argument for sizes the original cannot run (S < 1, M < 1, R < 8, a seed
  // numpy refuses).
  explicit LegacyBrainImpl(LegacyOptions o);
  ~LegacyBrainImpl() override;

  // One process_robot_cycle. sensory_input: what the original's list holds (length S, or S+1
  // with the reward last). now_s: the clock for this cycle (the pinned fake clock is t0 + n*dt).
  std::vector<double> step(const std::vector<double>& sensory_input, double now_s);
  int64_t cycle() const;
  // {"cycle", "prediction_confidence", "topology_regions" (count), "cognitive_mode",
  //  "field_energy", ...} (names as the original's _create_brain_state).
  nlohmann::json brain_state() const;
  const LegacyOptions& options() const;
  const torch::Tensor& field() const;  // [R,R,R,64] float32 CPU
  void save(const std::string& path) const;
  void load(const std::string& path);

  // For tests and tools: the cycle behind the brain.
  const LegacyCycle& cycle_state() const { return *cycle_; }

 private:
  LegacyOptions options_;
  std::unique_ptr<NumpyRandomState> numpy_;
  std::unique_ptr<LegacyCycle> cycle_;
};
TORCH_MODULE(LegacyBrain);

}  // namespace fieldbrain::legacy
