// em-brain's EvolvedFieldDynamics (brains/field/evolved_field_dynamics.py): the field's own
// evolution (differential decay, spontaneous waves and noise, learned diffusion, coupling,
// self-modifying dynamics channels), the field state, novelty, confidence and the modulation
// that the rest of the cycle reads. Channels 0-47 are content, 48-63 the dynamics parameters.
#pragma once

#include <torch/torch.h>

#include <deque>
#include <optional>
#include <vector>

#include "brain/legacy/legacy_state_io.h"
#include "brain/legacy/novelty_sample.h"
#include "brain/legacy/prediction_error_learning.h"
#include "brain/legacy/topology_regions.h"
#include "brain/legacy/traveling_waves.h"

namespace fieldbrain::legacy {

// compute_field_modulation's dict (every key the original stores).
struct FieldModulation {
  bool set = false;  // `if modulation:` (the dict is empty before the first cycle's state)
  double internal_drive = 0.5, exploration_drive = 0.5, sensory_amplification = 1.0;
  double imprint_strength = 0.5, motor_noise = 0.25, decay_rate = 0.999;
  double attention_novelty_bias = 0.4, information = 0.5, confidence = 0.5, novelty = 0.0;
  bool is_dreaming = false;
};

struct FieldState {
  double raw_information = 0, variance = 0, combined_information = 0, smoothed_information = 0;
};

struct FieldDynamicsOptions {
  explicit FieldDynamicsOptions(std::vector<int64_t> field_shape)
      : field_shape_(std::move(field_shape)) {}
  TORCH_ARG(std::vector<int64_t>, field_shape);
  TORCH_ARG(double, spontaneous_rate) = 0.001;  // BrainConfig.spontaneous_rate
  TORCH_ARG(double, decay_multiplier) = 0.999;  // StabilityConstants.FIELD_DECAY_MULTIPLIER
  TORCH_ARG(int64_t, pattern_memory_size) = 100;
  TORCH_ARG(int64_t, confidence_window) = 50;
};

class FieldDynamicsImpl : public torch::nn::Module {
 public:
  // __init__: n_waves = numpy randint(3, 6) from `n_waves`, then randn(n_waves, 3) from `gen`,
  // rows normalised.
  FieldDynamicsImpl(FieldDynamicsOptions options, int64_t n_waves, at::Generator& gen);

  // initialize_field_dynamics: four randn [R,R,R,4] draws into channels 48-63.
  void initialize_field_dynamics(torch::Tensor& field, at::Generator& gen) const;
  // evolve_field: the evolved field; draws randn [R,R,R,48] (and randn for NaNs, never seen).
  // The result is this module's scratch buffer: valid until the next call.
  const torch::Tensor& evolve_field(const torch::Tensor& field, at::Generator& gen);
  // compute_field_state
  FieldState compute_field_state(const torch::Tensor& field);
  // compute_novelty
  double compute_novelty(const torch::Tensor& field);
  // update_confidence
  void update_confidence(double prediction_error);
  // compute_field_modulation
  const FieldModulation& compute_field_modulation(const FieldState& state, bool has_sensory_input);
  // process_prediction_errors: the error field and the learning modulation.
  void process_prediction_errors(const torch::Tensor& errors,
                                 const std::vector<const TopologyRegion*>& regions);

  const FieldModulation& modulation() const { return modulation_; }
  const LearningModulation& error_modulation() const { return error_modulation_; }
  double smoothed_confidence() const { return smoothed_confidence_; }
  double smoothed_information() const { return smoothed_information_; }
  double self_modification_strength() const { return self_modification_strength_; }
  int64_t evolution_count() const { return evolution_count_; }
  int64_t cycles_without_input() const { return cycles_without_input_; }
  int64_t learning_plateau_cycles() const { return learning_plateau_cycles_; }
  const torch::Tensor& wave_vectors() const { return wave_vectors_; }

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

 private:
  torch::Tensor generate_traveling_waves(const std::vector<int64_t>& shape);
  void update_self_modification_strength();

  FieldDynamicsOptions options_;
  int64_t content_features_ = 48, spatial_features_ = 32;
  torch::Tensor wave_vectors_;  // [n_waves, 3]
  double phase_offset_ = 0.0;
  double self_modification_strength_ = 0.01;
  int64_t evolution_count_ = 0;
  std::deque<torch::Tensor> pattern_memory_;  // novelty snapshots, maxlen 200
  std::deque<int64_t> pattern_timestamps_;
  std::deque<double> prediction_errors_;  // maxlen 50
  double smoothed_confidence_ = 0.5;
  std::deque<double> error_improvement_history_;  // maxlen 50
  int64_t learning_plateau_cycles_ = 0;
  double smoothed_information_ = 0.5;
  int64_t cycles_without_input_ = 0;
  double last_novelty_ = 0.0;
  FieldModulation modulation_;
  std::optional<PredictionErrorLearning> error_learning_;
  torch::Tensor last_error_field_;  // undefined until the first process_prediction_errors
  double last_error_field_mean_abs_ = 0.0;
  torch::Tensor error_resource_terms_;  // resource_terms(last_error_field_)
  torch::Tensor resource_scratch_;      // resource_terms' scratch (no state)
  // evolve_field's scratch (no state: reallocated when missing)
  torch::Tensor scratch_a_, scratch_b_, scratch_act_, noise_, strengths_, evolved_;
  TravelingWaves traveling_waves_;  // the wave field's buffers (no state)
  NoveltySample novelty_sample_;    // compute_novelty's sample buffer and indices (no state)
  // compute_novelty's batch of dot products: the snapshots taken directly and their results
  // (buffers reused every cycle; no state)
  std::vector<const float*> dot_inputs_;
  std::vector<float> dot_results_;
  LearningModulation error_modulation_;
};
TORCH_MODULE(FieldDynamics);

}  // namespace fieldbrain::legacy
