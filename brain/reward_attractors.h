// Reward attractors (docs/cycle.md steps 6 and 7.9; legacy §3.7, §4.6): a rewarded or
// punished field is remembered in a ring of A slots and, while its strength decays, pulls the
// field towards (reward) or away from (punishment) that state.
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"
#include "brain/cycle_context.h"

namespace fieldbrain {

struct RewardAttractorsOptions {
  RewardAttractorsOptions(int64_t batch, int64_t capacity, int64_t resolution)
      : batch_(batch), capacity_(capacity), resolution_(resolution) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, capacity);
  TORCH_ARG(int64_t, resolution);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class RewardAttractorsImpl : public BrainModule {
 public:
  explicit RewardAttractorsImpl(RewardAttractorsOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Step 6: robots with |reward| > 0.1 store `field` in their next slot.
  void record(const CycleContext& ctx, const torch::Tensor& field);
  // Step 7.9: ages every live slot, retires the faded ones and adds their pull to `field`. On
  // the CPU one walk (brain/attractor_influence.h), elsewhere influence_aten.
  void influence(torch::Tensor& field);
  // Step 7.9 as ATen ops on any device: the expression the CPU walk reproduces bit for bit
  // (test/brain/attractor_influence_test.cpp holds them against each other).
  void influence_aten(torch::Tensor& field);
  // Live slots of robot b (host).
  int64_t live(int64_t b) const;

  // The fused path (brain/ops/attractor_pull.h): the host does steps 6 and 7.9's bookkeeping
  // for robot b at the start of the cycle (store when |r| > 0.1, age every live slot, retire the
  // faded ones) and writes the slot table the operators read: `weights` [A, 2] of robot b, and
  // returns the slot step 6 stores into (-1: none).
  int64_t plan(int64_t b, float reward, float* weights);
  // Steps 6 and 7.9 on the device from the planned tables (no host decision, no tensor made),
  // in one operator: `source` (the field of step 6) is stored into each robot's planned `slot`
  // (and its 16-bit copy into `shadow`, `shadow_scale`), then `field` = `next` (the field after
  // step 7.8) pulled by the live slots, for every robot (a copy of next where no slot pulls).
  // `shadow` [B,A,64,R,R,R] int16 and `shadow_scale` [B,A,64] float are the fused cycle's
  // (brain/cycle_fused.h): the bank's copy by the rule of brain/ops/attractor_math.h in every
  // live slot, which the pull reads instead of the bank.
  void store_and_pull_planned(torch::Tensor& field, const torch::Tensor& next,
                              torch::Tensor& shadow, torch::Tensor& shadow_scale,
                              const torch::Tensor& weights, const torch::Tensor& source,
                              const torch::Tensor& slot);
  // shadow[b, j], shadow_scale[b, j] = the bank's slot by that rule for every live slot of
  // robot b: after the bank was set from outside (a load, a row move). Dead slots are left as
  // they are: a store rewrites a slot and its shadow whole before it pulls.
  void rebuild_shadow(int64_t b, torch::Tensor& shadow, torch::Tensor& shadow_scale) const;

  // Step 6's bookkeeping for robot b (shared by record and plan): when |r| > 0.1, the next slot
  // gets strength |r|, valence sign(r), age 0 and is valid; returns that slot, or -1.
  int64_t store(int64_t b, float r);
  // Step 7.9's ageing of slot j of robot b (shared by influence and plan): a valid slot ages by
  // one and returns its strength * 0.95^age, or is retired below 0.001; 0 when it pulls nothing.
  double age_slot(int64_t b, int64_t j);

  RewardAttractorsOptions options;
  torch::Tensor bank;      // [B,A,64,R,R,R] device
  // Slot metadata, known on the host (no sync to decide anything about attractors).
  torch::Tensor strength;  // [B,A] float64 CPU
  torch::Tensor valence;   // [B,A] float64 CPU (+1 / -1)
  torch::Tensor age;       // [B,A] int64 CPU
  torch::Tensor valid;     // [B,A] int64 CPU 0/1
  torch::Tensor written;   // [B] int64 CPU: attractors ever recorded
  // Scratch of store_and_pull_planned, [B, 64(1+2A)] float64 on the device (not saved).
  torch::Tensor workspace;
};
TORCH_MODULE(RewardAttractors);

}  // namespace fieldbrain
