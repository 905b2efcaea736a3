// The fused cycle's prediction-error field (docs/cycle.md step 3): the state of
// PredictionErrorField (brain/prediction_error_field.h), step 3 as one operator,
// fieldbrain::error_field_update_ (brain/ops/hierarchy_learn.h), which creates no tensor.
#pragma once

#include "brain/prediction_error_field.h"

namespace fieldbrain {

class FusedPredictionErrorFieldImpl : public PredictionErrorFieldState {
 public:
  explicit FusedPredictionErrorFieldImpl(PredictionErrorFieldOptions options);
  // Step 3 for the scored robots (decided in the kernel from ctx.facts), from e = a - pred
  // [B,S], which must be contiguous (it is read in place; only its scored robots' rows matter).
  void update(const CycleContext& ctx, const torch::Tensor& e);
};
TORCH_MODULE(FusedPredictionErrorField);

}  // namespace fieldbrain
