// Spatial pooling (docs/cycle.md step 8): 4x4x4 cells instead of legacy's topology regions. A cell is
// active when its mean activity exceeds the salience threshold; active cells feed confidence
// (step 1 of the next cycle) and the next-input prediction (step 9).
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"

namespace fieldbrain {

struct SpatialPoolingOptions {
  explicit SpatialPoolingOptions(int64_t batch) : batch_(batch) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class SpatialPoolingImpl : public BrainModule {
 public:
  explicit SpatialPoolingImpl(SpatialPoolingOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // The reference path; on the fast path fieldbrain::prediction_act writes the same buffers
  // (FusedNextInputPredictionImpl::predict_and_act).
  void update(const torch::Tensor& field);

  SpatialPoolingOptions options;
  torch::Tensor active;    // [B,64] 0/1, cells x-major
  torch::Tensor n_active;  // [B]
  torch::Tensor temporal;  // [B,16,64] signed cell means of channels 32..47
};
TORCH_MODULE(SpatialPooling);

}  // namespace fieldbrain
