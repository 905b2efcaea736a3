// Field state, novelty, confidence and modulation (docs/cycle.md step 5 and step 7.6;
// legacy §3.6): how informative and how novel the field is, how well prediction is
// going, and from that the drive, exploration, imprint strength, decay and self-modification
// strength that steer the rest of the cycle.
#pragma once

#include <torch/torch.h>

#include "brain/cycle_context.h"
#include "brain/ring_buffer.h"

namespace fieldbrain {

struct NoveltyModulationOptions {
  explicit NoveltyModulationOptions(int64_t batch) : batch_(batch) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class NoveltyModulationImpl : public torch::nn::Module {
 public:
  explicit NoveltyModulationImpl(NoveltyModulationOptions options);

  // Step 5 with the field after the imprint and the last prediction error [B,S].
  // activity_stats [B,2] (mean|F[0:48]|, unbiased var(F[0:48])) when the fused read-out
  // (brain/ops/field_readout.h) has them; undefined: computed here with ATen ops.
  void update(const CycleContext& ctx, const torch::Tensor& field, const torch::Tensor& last_err,
              const torch::Tensor& activity_stats = torch::Tensor());

  // Step 7.6: the next self-modification strength.
  void update_sigma(const CycleContext& ctx, const torch::Tensor& has_ef, const torch::Tensor& boost);

  // Live cycles without input (host).
  int64_t cycles_without_input(int64_t b) const { return cwi.data_ptr<int64_t>()[b]; }

  NoveltyModulationOptions options;
  RingBuffer nov{nullptr};   // novelty memory, 200 x [512]
  torch::Tensor nov_ts;      // [B,200] int64 CPU: cycle of each novelty entry
  RingBuffer perr{nullptr};  // prediction errors, 50
  RingBuffer pimp{nullptr};  // error improvements, 50
  torch::Tensor cwi;         // [B] int64 CPU: cycles without input
  // [B] device scalars.
  torch::Tensor si, sc, plateau, sigma, prev_imp, prev_amp;
  torch::Tensor novelty, drive, explore, amp, imp, decay, info;

 private:
  torch::Tensor nov_idx_;  // [512] int64: the sampled elements of the 8^4 corner block
};
TORCH_MODULE(NoveltyModulation);

}  // namespace fieldbrain
