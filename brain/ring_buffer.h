// A fixed-capacity ring of items per robot (docs/cycle.md "Ring buffers"): the legacy deques in a
// batched, pre-allocated form. The data lives on the brain's device; the push counts live on
// the host (a CPU buffer), because which slots are valid only depends on how often each robot
// pushed, which the host knows without a device sync.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "brain/brain_module.h"

namespace fieldbrain {

struct RingBufferOptions {
  RingBufferOptions(int64_t batch, int64_t capacity, std::vector<int64_t> item_shape)
      : batch_(batch), capacity_(capacity), item_shape_(std::move(item_shape)) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, capacity);
  TORCH_ARG(std::vector<int64_t>, item_shape);  // {} for scalar items
  TORCH_ARG(torch::Dtype, dtype) = torch::kFloat;
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class RingBufferImpl : public BrainModule {
 public:
  explicit RingBufferImpl(RingBufferOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Pushes items[b] ([B, item...] on the device) for every robot b with which[b] (all robots
  // when `which` is empty): writes slot count mod N, then count += 1.
  void push(const torch::Tensor& items, const std::vector<bool>& which = {});
  // count += 1 for every robot b with which[b] (all when empty), for a fused operator that
  // already wrote slot `count mod N` from the count in the cycle's facts (brain/cycle_facts.h).
  void advance(const std::vector<bool>& which = {});

  // Mean over valid slots with age in [k1, k2), divided by min(k2, count) - k1; 0 for a robot
  // whose denominator is <= 0. [B, item...] on the device.
  torch::Tensor mean_ages(int64_t k1, int64_t k2) const;
  torch::Tensor mean_last(int64_t k) const { return mean_ages(0, k); }

  // The slot holding the item of the given age for robot b (age < min(count, N)).
  int64_t slot_of_age(int64_t b, int64_t age) const;
  int64_t count(int64_t b) const { return counts_ptr()[b]; }
  // [B,N] 0/1 float on the device: slots that hold an item.
  torch::Tensor valid_mask() const;

  RingBufferOptions options;
  torch::Tensor data;    // [B, N, item...] device
  torch::Tensor counts;  // [B] int64 CPU: pushes ever

 private:
  const int64_t* counts_ptr() const { return counts.data_ptr<int64_t>(); }
};
TORCH_MODULE(RingBuffer);

}  // namespace fieldbrain
