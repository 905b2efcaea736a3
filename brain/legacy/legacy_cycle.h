// em-brain's UnifiedFieldBrain (brains/field/unified_field_brain.py) as its server's factory
// builds it (hierarchical prediction, strategic planning and active vision enabled; the
// planner's discovery served as its mode says, brain/legacy/pattern_discovery.h): construction
// in the original's draw order and one
// process_robot_cycle, reading top to bottom like the original. Inputs are validated by the
// caller (LegacyBrainImpl).
#pragma once

#include <torch/torch.h>

#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "brain/legacy/field_dynamics.h"
#include "brain/legacy/legacy_state_io.h"
#include "brain/legacy/pattern_discovery.h"
#include "brain/legacy/predictive_field.h"
#include "brain/legacy/reward_shaping.h"
#include "brain/legacy/sensory_mapping.h"
#include "brain/legacy/topology_regions.h"

namespace fieldbrain::legacy {

class LegacyCycle {
 public:
  // UnifiedFieldBrain.__init__ + the factory's enable_* calls; every construction draw comes
  // from `gen` (torch's) and `n_waves` (numpy's randint(3, 6), drawn by the caller).
  LegacyCycle(int64_t sensory_dim, int64_t motor_dim, int64_t resolution, int64_t n_waves,
              at::Generator gen, LegacyPlanner planner = LegacyPlanner::Off);

  // process_robot_cycle(sensory_input) at clock `now_s`: the M motors.
  std::vector<double> process(const std::vector<double>& sensory_input, double now_s);

  // _create_brain_state (the keys the port keeps; see docs/legacy.md).
  nlohmann::json brain_state() const;

  int64_t cycle() const { return brain_cycles_; }
  const torch::Tensor& field() const { return field_; }
  double prediction_confidence() const { return prediction_confidence_; }
  int64_t region_count() const { return topology_.size(); }
  at::Generator& generator() { return gen_; }
  const FieldDynamics& dynamics() const { return dynamics_; }
  const PredictiveFieldSystem& predictive() const { return predictive_; }
  const SensoryMapping& mapping() const { return mapping_; }
  int64_t discovery_requests() const { return discovery_requests_; }
  // current_strategic_pattern (none until a discovery with a positive score arrives).
  const std::optional<StrategicPattern>& strategic_pattern() const { return pattern_; }
  const PatternDiscovery& discovery() const { return *discovery_; }
  // The length of the inputs seen so far (-1 before the first cycle).
  int64_t input_length() const { return input_length_; }

  void save(StateWriter& w) const;
  void load(const StateReader& r);

 private:
  void imprint_experience(const torch::Tensor& raw, double field_intensity);
  void evolve_field();
  // Step 7: discover_async when the original would, then the finished discovery's callback.
  void strategic_discovery(double now_s);
  void apply_strategic_pattern();
  // The regions behind _last_activated_regions: null entries for region-ID strings.
  std::vector<TopologyRegion*> last_activated_objects();

  int64_t S_, M_, R_;
  at::Generator gen_;
  torch::Tensor field_;  // [R,R,R,64] float32
  torch::Tensor spare_field_;  // the buffer the next evolution writes (no state)
  FieldDynamics dynamics_{nullptr};
  RewardTopologyShaper shaper_;
  TopologyRegionSystem topology_;
  SensoryMapping mapping_;
  PredictiveFieldSystem predictive_;

  int64_t brain_cycles_ = 0;
  int64_t field_evolution_cycles_ = 0;
  double prediction_confidence_ = 0.5;   // _current_prediction_confidence
  torch::Tensor predicted_sensory_;      // None until the first prediction
  torch::Tensor last_prediction_error_;  // the initial float 0.3 while undefined
  double last_imprint_strength_ = 0.0;
  // _last_activated_regions: region IDs after a detection cycle, else region objects (B3).
  bool last_activated_are_ids_ = false;
  std::vector<std::string> last_activated_;
  std::deque<std::vector<double>> recent_sensory_;  // maxlen 10
  double last_reward_signal_ = 0.0;
  std::string temporal_basis_ = "immediate";
  int64_t discovery_requests_ = 0;  // the planner's discovery requests (P4)
  std::unique_ptr<PatternDiscovery> discovery_;
  std::optional<StrategicPattern> pattern_;  // current_strategic_pattern
  int last_imprint_strategy_ = -1;
  int64_t input_length_ = -1;
};

}  // namespace fieldbrain::legacy
