// The fused cycle's sensory imprint (docs/cycle.md step 4): the state of SensoryImprint
// (brain/sensory_imprint.h), the step as one operator, fieldbrain::sensory_imprint_
// (brain/ops/sensory_imprint.h), which draws its empty-location noise itself and creates no
// tensor.
#pragma once

#include <vector>

#include "brain/sensory_imprint.h"

namespace fieldbrain {

class FusedSensoryImprintImpl : public SensoryImprintState {
 public:
  explicit FusedSensoryImprintImpl(SensoryImprintOptions options);

  // Step 4, decisions per robot from ctx.facts, eps_loc drawn in the kernel from noise_key
  // [B,2] (seed, cycle): launch, then advance_host. Returns the imprint strength s [B] (0
  // where skipped): the module's own [B] scratch, rewritten every cycle.
  torch::Tensor apply(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                      const torch::Tensor& noise_key);
  // The operator launch alone (device work only, for a graph-captured cycle,
  // brain/cycle_graph.h); returns the strength scratch. advance_host then advances the map
  // ring for the robots with input.
  torch::Tensor launch(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                       const torch::Tensor& noise_key);
  void advance_host(const CycleContext& ctx) override;

 private:
  // The operator's static tables (ops::make_imprint_tables), its per-robot scratch and the
  // strength it writes.
  std::vector<torch::Tensor> tables_;
  torch::Tensor strength_;      // [B] float
  torch::Tensor work_;          // [B, ImprintScratchLayout::floats()] float, zero at creation
  torch::Tensor plane_argmax_;  // [B,R] int32
};
TORCH_MODULE(FusedSensoryImprint);

}  // namespace fieldbrain
