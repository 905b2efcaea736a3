// The host-known facts of a cycle as per-robot tables on the brain's device (one int64
// [B, kFactColumns], one float32 [B, kValueColumns] with the inputs), rewritten in place every
// cycle (a static buffer: on CUDA one small host-to-device
// copy from pinned memory, on the CPU the table itself). Fused operators read a robot's cycle
// number, input flag and ring counts from here instead of branching on the host, so the
// cycle's launch sequence is the same every cycle (what a CUDA graph replays).
//
// Ring counts are taken at the start of the cycle, before any of its pushes: a kernel that
// pushes writes slot `count mod N` and the host then advances the ring's count
// (RingBufferImpl::advance), exactly as RingBufferImpl::push would have. The columns, the ring
// capacities and the push rules are brain/ops/cycle_layout.h (no LibTorch: kernels read it).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "brain/ops/cycle_layout.h"  // the columns: FactColumn, ValueColumn

namespace fieldbrain {

// The tables' host staging copies and their device copies (the same tensors on the CPU).
struct CycleFacts {
  torch::Tensor host;            // [B, kFactColumns] int64 CPU (pinned when the device is CUDA)
  torch::Tensor device;          // [B, kFactColumns] int64 on the brain's device
  torch::Tensor values_host;     // [B, kValueColumns] float32 CPU (pinned on CUDA)
  torch::Tensor values;          // [B, kValueColumns] float32 on the brain's device
  torch::Tensor sensors_host;    // [B, S] float32 CPU (pinned on CUDA)
  torch::Tensor sensors;         // [B, S] float32 on the brain's device
  // Step 7.9's pull per attractor slot (brain/ops/attractor_math.h), decided on the host.
  torch::Tensor attractor_weights_host;  // [B, A, 2] float32 CPU (pinned on CUDA)
  torch::Tensor attractor_weights;       // [B, A, 2] float32 on the brain's device

  void allocate(int64_t batch, int64_t sensory_dim, const torch::Device& device,
                int64_t attractor_slots = 1);
  // Robot b's rows of the host copies (write them, then upload()).
  int64_t* row(int64_t b) { return host.data_ptr<int64_t>() + b * kFactColumns; }
  float* values_row(int64_t b) { return values_host.data_ptr<float>() + b * kValueColumns; }
  // Copies the host tables to the device (nothing to do on the CPU; asynchronous from pinned
  // memory on CUDA: the host must not rewrite them before the cycle's one sync).
  void upload();
  // Every distinct per-robot tensor here (for BrainGroup's row views).
  std::vector<torch::Tensor> tensors() const;
};

}  // namespace fieldbrain
