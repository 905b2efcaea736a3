// The prediction-error field and resource allocation (docs/cycle.md step 3; legacy §4.4):
// the signed error of the sensors of each enc2field site becomes a spatial map Ef that
// modulates the field dynamics (step 7.5), the self-modification boost and the imprint.
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"
#include "brain/cycle_context.h"

namespace fieldbrain {

struct PredictionErrorFieldOptions {
  PredictionErrorFieldOptions(int64_t batch, int64_t sensory_dim, int64_t resolution)
      : batch_(batch), sensory_dim_(sensory_dim), resolution_(resolution) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, sensory_dim);
  TORCH_ARG(int64_t, resolution);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
  // The fast path (brain/FUSED.md): step 3 as fieldbrain::error_field_update_
  // (brain/ops/hierarchy_learn.h), which creates no tensor.
  TORCH_ARG(bool, fused) = false;
};

class PredictionErrorFieldImpl : public BrainModule {
 public:
  explicit PredictionErrorFieldImpl(PredictionErrorFieldOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Step 3 for the scored robots, from e = a - pred [B,S]; others keep their state. Fused: e
  // must be contiguous (it is read in place; only its scored robots' rows matter).
  void update(const CycleContext& ctx, const torch::Tensor& e);

  PredictionErrorFieldOptions options;
  torch::Tensor ef;      // [B,R,R,R]
  torch::Tensor has_ef;  // [B] 0/1
  torch::Tensor boost;   // [B] self-modification boost, 1 until the first error
};
TORCH_MODULE(PredictionErrorField);

}  // namespace fieldbrain
