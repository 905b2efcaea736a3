// The fused cycle's novelty and modulation (docs/cycle.md steps 5 and 7.6): the state of
// NoveltyModulation (brain/novelty_modulation.h), both steps as one launch of
// fieldbrain::novelty_modulation_ (brain/ops/novelty_modulation.h), which also fills the field
// step's per-robot scalars and creates no tensor.
#pragma once

#include <vector>

#include "brain/novelty_modulation.h"

namespace fieldbrain {

class FusedNoveltyModulationImpl : public NoveltyModulationState {
 public:
  explicit FusedNoveltyModulationImpl(NoveltyModulationOptions options);

  // Step 5 with the field after the imprint, the last prediction error [B,S], the activity
  // statistics [B,2] (mean|F[0:48]|, unbiased var(F[0:48])) of the fused read-out
  // (brain/ops/field_readout.h) and the error field's has_ef and boost [B]: every argument is
  // required (std::invalid_argument otherwise). The same launch fills step_scalars() with
  // (decay, drive, explore, sigma, has_ef, 0, 0, 0), sigma as the field step must see it, then
  // makes step 7.6's update of sigma. launch_update, then advance_host.
  void update(const CycleContext& ctx, const torch::Tensor& field, const torch::Tensor& last_err,
              const torch::Tensor& activity_stats = torch::Tensor(),
              const torch::Tensor& has_ef = torch::Tensor(),
              const torch::Tensor& boost = torch::Tensor());
  // The operator launch alone (device work only, for a graph-captured cycle,
  // brain/cycle_graph.h); the host's ring-count and cwi bookkeeping is advance_host.
  void launch_update(const CycleContext& ctx, const torch::Tensor& field,
                     const torch::Tensor& last_err, const torch::Tensor& activity_stats,
                     const torch::Tensor& has_ef, const torch::Tensor& boost);
  void advance_host(const CycleContext& ctx) override;

  // The field step's per-robot scalars [B,8] on the device, rewritten by every update()
  // (per-robot scratch, not a buffer: BrainGroup's row views follow it).
  const torch::Tensor& step_scalars() const { return step_scalars_; }

 private:
  torch::Tensor step_scalars_;        // [B,8] device
  std::vector<torch::Tensor> state_;  // the [B] scalars in modulation::StateColumn order
  std::vector<bool> push_imp_;        // per robot: pimp gets a push this cycle
};
TORCH_MODULE(FusedNoveltyModulation);

}  // namespace fieldbrain
