// em-brain's HierarchicalPredictionSystem (brains/field/hierarchical_prediction.py): four
// timescales (immediate, short, long, abstract), each a [16,S] weight matrix from a channel
// block's spatial mean to a prediction, learned from errors; errors also write sensor "blobs"
// into the field.
#pragma once

#include <torch/torch.h>

#include <array>
#include <deque>
#include <vector>

#include "brain/legacy/legacy_state_io.h"

namespace fieldbrain::legacy {

// HierarchicalPrediction (the dataclass)
struct HierarchicalPredictionResult {
  std::array<torch::Tensor, 4> predictions;  // immediate, short, long, abstract: float32 [S]
  std::array<double, 4> confidences{};
};

// One assignment of _encode_pattern_to_field: field[box, channel] = value (as float32).
struct FieldBlobWrite {
  int64_t x0, x1, y0, y1, z0, z1, channel;
  double value;
};

struct HierarchicalPredictionOptions {
  HierarchicalPredictionOptions(std::vector<int64_t> field_shape, int64_t sensory_dim)
      : field_shape_(std::move(field_shape)), sensory_dim_(sensory_dim) {}
  TORCH_ARG(std::vector<int64_t>, field_shape);
  TORCH_ARG(int64_t, sensory_dim);
};

class HierarchicalPredictionImpl : public torch::nn::Module {
 public:
  // Draws the four xavier_uniform_ weights (gains 1, .5, .3, .2) from `gen`, in order.
  HierarchicalPredictionImpl(HierarchicalPredictionOptions options, at::Generator& gen);

  // extract_hierarchical_predictions, from the field's 64 channel means (channel_means).
  HierarchicalPredictionResult extract(const torch::Tensor& channel_means) const;
  // torch.mean(field[..., 16k:16k+16], (0, 1, 2)) for k = 0..3 as float32 [64], in one walk,
  // summed in ATen's order (aten_sums.h), bit for bit; with `abs_mean_32` also
  // mean(|field[..., :32]|).
  static torch::Tensor channel_means(const torch::Tensor& field, double* abs_mean_32 = nullptr);
  // combine_hierarchical_predictions
  static torch::Tensor combine(const HierarchicalPredictionResult& p);
  // process_hierarchical_errors: learns the weights; the field update it returns in the
  // original (zeros except the blobs) is returned as its blob writes, in order.
  std::vector<FieldBlobWrite> process_errors(const HierarchicalPredictionResult& predicted,
                                             const torch::Tensor& actual,
                                             const torch::Tensor& current_field);

  const std::array<torch::Tensor, 4>& weights() const { return weights_; }
  int64_t history_length() const { return static_cast<int64_t>(history_.size()); }

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

 private:
  static double calculate_confidence(const std::deque<double>& errors);
  void encode_pattern_to_field(const float* pattern, int64_t length, int64_t first_channel,
                               double error_magnitude, std::vector<FieldBlobWrite>& out) const;
  void history_mean(std::size_t first, float* out);

  HierarchicalPredictionOptions options_;
  std::array<torch::Tensor, 4> weights_;
  std::deque<torch::Tensor> history_;         // sensory_history, maxlen 1000
  std::array<std::deque<double>, 4> errors_;  // maxlen 50 each
  std::vector<float> history_rows_;           // history_mean's gathered rows (reused)
  std::vector<float> target_scratch_, error_scratch_;  // process_errors' (reused)
};
TORCH_MODULE(HierarchicalPrediction);

}  // namespace fieldbrain::legacy
