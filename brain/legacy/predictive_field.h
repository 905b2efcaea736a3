// em-brain's PredictiveFieldSystem (brains/field/predictive_field_system.py): the next input
// predicted from the hierarchy, the input's momentum and the predictive regions; errors
// scored per region and handed to the hierarchy (whose field update waits for the evolution).
#pragma once

#include <torch/torch.h>

#include <deque>
#include <string>
#include <vector>

#include "brain/legacy/hierarchical_prediction.h"
#include "brain/legacy/legacy_state_io.h"
#include "brain/legacy/topology_regions.h"

namespace fieldbrain::legacy {

struct SensoryPredictionResult {
  torch::Tensor values;        // float32 [S]
  std::string temporal_basis;  // "immediate" | "short_term" | "long_term" | "abstract"
};

// The prediction's terms as loops over the tensors' memory with the ATen expressions' float32
// roundings (exposed for test/legacy/exact_prediction_test.cpp, which holds them against those
// expressions). predictions[:n] += combine_hierarchical_predictions(p)[:n] * 0.4:
void add_combined_prediction(const HierarchicalPredictionResult& p, float* predictions, int64_t n);
// predictions += _compute_momentum_prediction(recent) * 0.3 (recent: >= 2 inputs, the last <= 3
// used, each of length n); false, with nothing added, when a used row's length is not n.
bool add_momentum_prediction(const std::deque<std::vector<double>>& recent, float* predictions,
                             int64_t n);
// The momentum term as the original's tensor ops (any row lengths: broadcasts or raises as they do).
void add_momentum_prediction_aten(const std::deque<std::vector<double>>& recent,
                                  torch::Tensor& predictions);

class PredictiveFieldSystem {
 public:
  PredictiveFieldSystem(std::vector<int64_t> field_shape, int64_t sensory_dim, at::Generator& gen);

  // generate_sensory_prediction(field, regions, recent_sensory) with hierarchical prediction
  // enabled (the factory's setting). The per-sensor confidences are stored by the original and
  // read by nothing: not computed.
  SensoryPredictionResult generate(const torch::Tensor& field,
                                   const std::vector<TopologyRegion*>& regions,
                                   const std::deque<std::vector<double>>& recent_sensory);
  // process_prediction_error(predicted, actual, regions, field). Null region entries stand for
  // the original's region-ID strings (skipped).
  void process_prediction_error(const torch::Tensor& predicted, const torch::Tensor& actual,
                                const std::vector<TopologyRegion*>& regions,
                                const torch::Tensor& field);
  // get_pending_hierarchical_update: the blob writes, cleared once read.
  std::vector<FieldBlobWrite> take_pending_update();

  HierarchicalPrediction& hierarchy() { return hierarchy_; }
  const HierarchicalPrediction& hierarchy() const { return hierarchy_; }

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

 private:
  int64_t sensory_dim_;
  HierarchicalPrediction hierarchy_;
  bool has_last_hierarchical_ = false;
  HierarchicalPredictionResult last_hierarchical_;
  bool has_pending_ = false;
  std::vector<FieldBlobWrite> pending_;
  std::deque<double> error_history_;  // maxlen 100 (telemetry)
  std::vector<float> diff_;           // actual - predicted (reused)
};

}  // namespace fieldbrain::legacy
