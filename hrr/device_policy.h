// Seed 004's hybrid idea: small batches stay on the CPU (kernel-launch and transfer costs
// dominate), large batches go to the GPU. Run-where-the-tensors-are is the default everywhere
// else in the library; this helper is opt-in.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace fieldbrain::hrr {

struct DevicePolicy {
  // Batches with at least this many vectors go to CUDA when it is available. The default is a
  // starting point; measure the crossover on the target machine (fieldbrain-hrr bench).
  int64_t gpu_batch_threshold = 256;
  bool cuda_available = torch::cuda::is_available();

  torch::Device choose(int64_t batch_size) const;
  // Moves `vectors` [..., D] to choose(number of vectors).
  torch::Tensor place(const torch::Tensor& vectors) const;
};

}  // namespace fieldbrain::hrr
