#include "brain/hierarchical_predictor_fused.h"

#include "brain/ops/hierarchy_learn.h"
#include "brain/ops/hierarchy_learn_math.h"

namespace fieldbrain {

FusedHierarchicalPredictorImpl::FusedHierarchicalPredictorImpl(HierarchicalPredictorOptions options_)
    : HierarchicalPredictorState(std::move(options_)) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  pending = register_scratch(
      torch::zeros({options.batch(), ops::hierarchy::pending_width(options.sensory_dim())}, opts));
}

void FusedHierarchicalPredictorImpl::observe(const CycleContext& ctx, const torch::Tensor& field) {
  launch_observe(ctx, field);
  advance_host(ctx);
}

void FusedHierarchicalPredictorImpl::launch_observe(const CycleContext& ctx, const torch::Tensor& field) {
  ops::hierarchy_observe_(field, ctx.sensors, ctx.facts, hpred, hist->data, herr[0]->data,
                          herr[1]->data, herr[2]->data, herr[3]->data, W, pending);
}

void FusedHierarchicalPredictorImpl::advance_host(const CycleContext& ctx) {
  // The rings' host counts, advanced as the kernel pushed (brain/ops/hierarchy_learn.h).
  hist->advance();
  const int64_t B = ctx.batch;
  for (int k = 0; k < 4; ++k) {
    herr_pushed_[k].assign(B, false);  // no reallocation once sized
    for (int64_t b = 0; b < B; ++b) {
      herr_pushed_[k][b] = ops::hierarchy::timescale_active(ctx.cycle[b], hist->count(b), k);
    }
    herr[k]->advance(herr_pushed_[k]);
  }
}

void FusedHierarchicalPredictorImpl::apply_pending(torch::Tensor& field) {
  ops::hierarchy_apply_(field, pending);
}

}  // namespace fieldbrain
