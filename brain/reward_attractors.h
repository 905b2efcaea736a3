// Reward attractors (docs/cycle.md steps 6 and 7.9; legacy §3.7, §4.6): a rewarded or
// punished field is remembered in a ring of A slots and, while its strength decays, pulls the
// field towards (reward) or away from (punishment) that state.
#pragma once

#include <torch/torch.h>

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

class RewardAttractorsImpl : public torch::nn::Module {
 public:
  explicit RewardAttractorsImpl(RewardAttractorsOptions options);

  // Step 6: robots with |reward| > 0.1 store `field` in their next slot.
  void record(const CycleContext& ctx, const torch::Tensor& field);
  // Step 7.9: ages every live slot, retires the faded ones and adds their pull to `field`.
  void influence(torch::Tensor& field);
  // Live slots of robot b (host).
  int64_t live(int64_t b) const;

  RewardAttractorsOptions options;
  torch::Tensor bank;      // [B,A,64,R,R,R] device
  // Slot metadata, known on the host (no sync to decide anything about attractors).
  torch::Tensor strength;  // [B,A] float64 CPU
  torch::Tensor valence;   // [B,A] float64 CPU (+1 / -1)
  torch::Tensor age;       // [B,A] int64 CPU
  torch::Tensor valid;     // [B,A] int64 CPU 0/1
  torch::Tensor written;   // [B] int64 CPU: attractors ever recorded
};
TORCH_MODULE(RewardAttractors);

}  // namespace fieldbrain
