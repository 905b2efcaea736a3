// em-brain's PredictionErrorLearning (brains/field/prediction_error_learning.py): prediction
// errors become a spatial error field that steers how the dynamics channels evolve, and a
// learning modulation (self-modification boost, learning rate) for the imprint and sigma.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "brain/legacy/legacy_state_io.h"
#include "brain/legacy/topology_regions.h"

namespace fieldbrain::legacy {

// compute_learning_modulation's dict, reduced to what the cycle reads.
struct LearningModulation {
  bool set = false;                      // the original's `if self._error_modulation:`
  double self_modification_boost = 1.0;  // min(3, 1 + 4 mean|E|)
  double learning_rate = 0.1;            // 0.1 * boost
  double exploration_boost = 1.0;        // read by nothing that lasts (B6), kept for telemetry
  double mean_error = 0.0, max_error = 0.0;
};

class PredictionErrorLearning {
 public:
  explicit PredictionErrorLearning(std::vector<int64_t> field_shape);

  // error_to_field: the error field [R,R,R,64] of this cycle's errors `e` [S] at the
  // predictive regions' centres (regions in the given order; null entries skipped, as the
  // original skips region IDs), plus a global 0.05 mean|e|; with mean and max of its |E|,
  // taken in the same walk.
  struct ErrorField {
    torch::Tensor field;
    float mean_abs = 0.0f;  // torch.mean(torch.abs(E)), summed in ATen's order
    double max_abs = 0.0;   // torch.max(torch.abs(E)) (NaN when E holds one)
  };
  ErrorField error_to_field(const torch::Tensor& e,
                            const std::vector<const TopologyRegion*>& regions);
  // compute_learning_modulation.
  LearningModulation compute_learning_modulation(const ErrorField& error) const;
  // allocate_field_resources: the dynamics [R,R,R,16] pulled towards the error's demands
  // (the original's ATen chain; the brain uses resource_terms and field_loops).
  static torch::Tensor allocate_field_resources(const torch::Tensor& resource_mask,
                                                const torch::Tensor& dynamics);
  // |E| / (max|E| + 1e-8), channels 0-3 (the only ones allocate_field_resources reads).
  static torch::Tensor resource_mask(const torch::Tensor& error_field);
  // allocate_field_resources' three mask terms of m = |E[..., :4]| / (max|E| + 1e-8), as its
  // ATen ops round them, for field_loops' fused evolve, into `terms` [V,12] (made or reused):
  // (0.5 + (1 - m) * 0.5) * 0.1 (channels 0-3), (m * 0.2 - 0.1) * 0.1 (4-7),
  // sigmoid(m * 2 - 0.5) * 0.1 (12-15; the sigmoid ATen's, on a [V*4] buffer `scratch`, as the
  // original's runs on a contiguous [R,R,R,4]). The error field changes only when errors are
  // processed, so the brain makes the terms once per error field.
  static void resource_terms(const torch::Tensor& error_field, float max_abs, torch::Tensor& terms,
                             torch::Tensor& scratch);

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

 private:
  std::vector<int64_t> field_shape_;
  std::deque<double> error_history_;  // maxlen 100
  // error_to_field's two output buffers, used in turn (the caller keeps the last field while
  // the next is made); a buffer someone else still holds is replaced. No state.
  torch::Tensor buffers_[2];
  int next_buffer_ = 0;
  // error_to_field's scratch, reused every cycle: the regions' boxes and which voxels they touch
  struct ErrorBox {
    std::pair<int64_t, int64_t> xs, ys, zs;
    float delta;
  };
  std::vector<ErrorBox> boxes_;
  std::vector<uint8_t> live_voxels_;
};

}  // namespace fieldbrain::legacy
