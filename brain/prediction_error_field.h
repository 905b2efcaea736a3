// The prediction-error field and resource allocation (docs/cycle.md step 3; legacy §4.4):
// the signed error of the sensors of each enc2field site becomes a spatial map Ef that
// modulates the field dynamics (step 7.5), the self-modification boost and the imprint.
// Two types over one state (PredictionErrorFieldState): PredictionErrorField, the ATen method
// of the reference cycle, and FusedPredictionErrorField (brain/prediction_error_field_fused.h),
// the fused cycle's operator.
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
};

// The state both variants keep (the save format's buffers, under these names).
class PredictionErrorFieldState : public BrainModule {
 public:
  void set_batch(int64_t batch) override { options.batch(batch); }

  PredictionErrorFieldOptions options;
  torch::Tensor ef;      // [B,R,R,R]
  torch::Tensor has_ef;  // [B] 0/1
  torch::Tensor boost;   // [B] self-modification boost, 1 until the first error

 protected:
  explicit PredictionErrorFieldState(PredictionErrorFieldOptions options);
};

// The reference cycle's step 3 (ATen ops).
class PredictionErrorFieldImpl : public PredictionErrorFieldState {
 public:
  explicit PredictionErrorFieldImpl(PredictionErrorFieldOptions options);
  // Step 3 for the scored robots, from e = a - pred [B,S]; others keep their state.
  void update(const CycleContext& ctx, const torch::Tensor& e);
};
TORCH_MODULE(PredictionErrorField);

}  // namespace fieldbrain
