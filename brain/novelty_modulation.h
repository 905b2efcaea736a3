// Field state, novelty, confidence and modulation (docs/cycle.md step 5 and step 7.6;
// legacy §3.6): how informative and how novel the field is, how well prediction is
// going, and from that the drive, exploration, imprint strength, decay and self-modification
// strength that steer the rest of the cycle.
//
// Two implementations: the ATen method (reference and script paths, the checked reference) and,
// with options.fused (the fast path), one launch of fieldbrain::novelty_modulation_
// (brain/ops/novelty_modulation.h) that makes steps 5 and 7.6 and fills the field step's
// per-robot scalars, creating no tensor.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "brain/brain_module.h"
#include "brain/cycle_context.h"
#include "brain/ring_buffer.h"

namespace fieldbrain {

struct NoveltyModulationOptions {
  explicit NoveltyModulationOptions(int64_t batch) : batch_(batch) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
  // The fast path: update() runs the fused operator; nov_ts then lives on `device` (on the CPU
  // otherwise; saves hold it on the CPU either way, with the same name and shape).
  TORCH_ARG(bool, fused) = false;
};

class NoveltyModulationImpl : public BrainModule {
 public:
  explicit NoveltyModulationImpl(NoveltyModulationOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Step 5 with the field after the imprint and the last prediction error [B,S].
  // activity_stats [B,2] (mean|F[0:48]|, unbiased var(F[0:48])) when the fused read-out
  // (brain/ops/field_readout.h) has them; undefined: computed here with ATen ops.
  // Fused (options.fused): activity_stats, has_ef and boost [B] (the error field's) are
  // required, and the same launch fills step_scalars() with (decay, drive, explore, sigma,
  // has_ef, 0, 0, 0), sigma as the field step must see it, then makes step 7.6's update of
  // sigma: update_sigma is then not called (it refuses).
  void update(const CycleContext& ctx, const torch::Tensor& field, const torch::Tensor& last_err,
              const torch::Tensor& activity_stats = torch::Tensor(),
              const torch::Tensor& has_ef = torch::Tensor(),
              const torch::Tensor& boost = torch::Tensor());

  // Step 7.6: the next self-modification strength (ATen method; after the field step).
  void update_sigma(const CycleContext& ctx, const torch::Tensor& has_ef,
                    const torch::Tensor& boost);

  // Fused path: the field step's per-robot scalars [B,8] on the device, rewritten by every
  // update() (per-robot scratch, not a buffer: BrainGroup's row views follow it). Undefined
  // otherwise.
  const torch::Tensor& step_scalars() const { return step_scalars_; }

  // Live cycles without input (host).
  int64_t cycles_without_input(int64_t b) const { return cwi.data_ptr<int64_t>()[b]; }

  NoveltyModulationOptions options;
  RingBuffer nov{nullptr};   // novelty memory, 200 x [512]
  torch::Tensor nov_ts;      // [B,200] int64 (CPU; on the device when fused): cycle of each entry
  RingBuffer perr{nullptr};  // prediction errors, 50
  RingBuffer pimp{nullptr};  // error improvements, 50
  torch::Tensor cwi;         // [B] int64 CPU: cycles without input
  // [B] device scalars.
  torch::Tensor si, sc, plateau, sigma, prev_imp, prev_amp;
  torch::Tensor novelty, drive, explore, amp, imp, decay, info;

 // The fused update in two halves for a graph-captured cycle (brain/cycle_graph.h): the
  // operator launch (device work only) and the host's ring-count and cwi bookkeeping.
  void launch_update(const CycleContext& ctx, const torch::Tensor& field,
                     const torch::Tensor& last_err, const torch::Tensor& activity_stats,
                     const torch::Tensor& has_ef, const torch::Tensor& boost);
  void advance_host(const CycleContext& ctx) override;
  // perr, pimp and nov counts, cycles without input
  void write_facts(int64_t b, int64_t* facts) const override;

 private:
  void update_fused(const CycleContext& ctx, const torch::Tensor& field,
                    const torch::Tensor& last_err, const torch::Tensor& activity_stats,
                    const torch::Tensor& has_ef, const torch::Tensor& boost);

  torch::Tensor nov_idx_;  // [512] int64: the sampled elements of the 8^4 corner block
  // Fused path.
  torch::Tensor step_scalars_;        // [B,8] device
  std::vector<torch::Tensor> state_;  // the [B] scalars in modulation::StateColumn order
  std::vector<bool> push_imp_;        // per robot: pimp gets a push this cycle
};
TORCH_MODULE(NoveltyModulation);

}  // namespace fieldbrain
