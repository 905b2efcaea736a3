// The fused cycle's hierarchical prediction (docs/cycle.md steps 2 and 7.10): the state of
// HierarchicalPredictor (brain/hierarchical_predictor.h), steps 2 and 7.10 as
// fieldbrain::hierarchy_observe_ and hierarchy_apply_ (brain/ops/hierarchy_learn.h), which
// create no tensor: U_h is kept as its few cubes in `pending` between the two.
#pragma once

#include <array>
#include <vector>

#include "brain/hierarchical_predictor.h"

namespace fieldbrain {

class FusedHierarchicalPredictorImpl : public HierarchicalPredictorState {
 public:
  explicit FusedHierarchicalPredictorImpl(HierarchicalPredictorOptions options);

  // Step 2 with the field at cycle start, as HierarchicalPredictor::observe, its pending
  // update kept in `pending`: launch_observe, then advance_host.
  void observe(const CycleContext& ctx, const torch::Tensor& field);
  // The operator launch alone (device work only, for a graph-captured cycle,
  // brain/cycle_graph.h); the host's ring-count bookkeeping is advance_host.
  void launch_observe(const CycleContext& ctx, const torch::Tensor& field);
  void advance_host(const CycleContext& ctx) override;

  // Step 7.10 on a field that already holds next (the attractor pull writes it): field += U_h,
  // the pending cubes.
  void apply_pending(torch::Tensor& field);

  // Per-robot scratch [B, ops::hierarchy::pending_width(S)] (channel means at cycle start,
  // targets, the pending cubes; brain/ops/hierarchy_learn_math.h). Not state: not a buffer,
  // rewritten every cycle; registered scratch, so row views follow it.
  torch::Tensor pending;

 private:
  std::array<std::vector<bool>, 4> herr_pushed_;  // which robots pushed herr[k] this cycle
};
TORCH_MODULE(FusedHierarchicalPredictor);

}  // namespace fieldbrain
