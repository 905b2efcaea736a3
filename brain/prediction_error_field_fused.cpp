#include "brain/prediction_error_field_fused.h"

#include "brain/ops/hierarchy_learn.h"

namespace fieldbrain {

FusedPredictionErrorFieldImpl::FusedPredictionErrorFieldImpl(PredictionErrorFieldOptions options_)
    : PredictionErrorFieldState(std::move(options_)) {}

void FusedPredictionErrorFieldImpl::update(const CycleContext& ctx, const torch::Tensor& e) {
  ops::error_field_update_(e, ctx.facts, ef, has_ef, boost);
}

}  // namespace fieldbrain
