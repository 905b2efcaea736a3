// Field state, novelty, confidence and modulation (docs/cycle.md step 5 and step 7.6;
// legacy §3.6): how informative and how novel the field is, how well prediction is
// going, and from that the drive, exploration, imprint strength, decay and self-modification
// strength that steer the rest of the cycle.
//
// Two types over one state (NoveltyModulationState): NoveltyModulation, the ATen methods of the
// reference cycle (the checked reference), and FusedNoveltyModulation
// (brain/novelty_modulation_fused.h), the fused cycle's one launch of
// fieldbrain::novelty_modulation_ that makes steps 5 and 7.6 and fills the field step's
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
};

// The state both variants keep (the save format's buffers, under these names).
class NoveltyModulationState : public BrainModule {
 public:
  void set_batch(int64_t batch) override { options.batch(batch); }
  // perr, pimp and nov counts, cycles without input
  void write_facts(int64_t b, int64_t* facts) const override;

  // Live cycles without input (host).
  int64_t cycles_without_input(int64_t b) const { return cwi.data_ptr<int64_t>()[b]; }

  NoveltyModulationOptions options;
  RingBuffer nov{nullptr};   // novelty memory, 200 x [512]
  torch::Tensor nov_ts;      // [B,200] int64: cycle of each entry (saves hold it on the CPU)
  RingBuffer perr{nullptr};  // prediction errors, 50
  RingBuffer pimp{nullptr};  // error improvements, 50
  torch::Tensor cwi;         // [B] int64 CPU: cycles without input
  // [B] device scalars.
  torch::Tensor si, sc, plateau, sigma, prev_imp, prev_amp;
  torch::Tensor novelty, drive, explore, amp, imp, decay, info;

 protected:
  // nov_ts lives on `timestamps_device`: the CPU for the ATen method, which reads it on the
  // host; the module's device for the fused operator, which reads and writes it where it runs.
  NoveltyModulationState(NoveltyModulationOptions options, torch::Device timestamps_device);
};

// The reference cycle's steps 5 and 7.6 (ATen ops).
class NoveltyModulationImpl : public NoveltyModulationState {
 public:
  explicit NoveltyModulationImpl(NoveltyModulationOptions options);

  // Step 5 with the field after the imprint and the last prediction error [B,S].
  // activity_stats [B,2] (mean|F[0:48]|, unbiased var(F[0:48])) when a read-out
  // (brain/ops/field_readout.h) has them; undefined: computed here with ATen ops. has_ef and
  // boost are not read (they are step 7.6's, update_sigma's).
  void update(const CycleContext& ctx, const torch::Tensor& field, const torch::Tensor& last_err,
              const torch::Tensor& activity_stats = torch::Tensor(),
              const torch::Tensor& has_ef = torch::Tensor(),
              const torch::Tensor& boost = torch::Tensor());

  // Step 7.6: the next self-modification strength (after the field step).
  void update_sigma(const CycleContext& ctx, const torch::Tensor& has_ef,
                    const torch::Tensor& boost);

 private:
  torch::Tensor nov_idx_;  // [512] int64: the sampled elements of the 8^4 corner block
};
TORCH_MODULE(NoveltyModulation);

}  // namespace fieldbrain
