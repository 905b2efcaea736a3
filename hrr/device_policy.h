// Seed 004's hybrid idea: small batches stay on the CPU (kernel-launch and transfer costs
// dominate), large batches go to the GPU. Run-where-the-tensors-are is the default everywhere
// else in the library; this helper is opt-in.
//
// Where the crossover lies depends on the machine (measured on one H100 it was near batch 100,
// not the seed's guess of 10), so it is measured, not assumed: DevicePolicy::calibrated()
// times bind on both devices (measure_crossover) and takes the threshold from that.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace fieldbrain::hrr {

struct CrossoverPoint {
  int64_t batch = 0;
  double cpu_ms = 0.0;   // median bind of [batch, D] on the CPU
  double cuda_ms = 0.0;  // the same on CUDA, synchronised
};

struct Crossover {
  int64_t dim = 0;
  // Smallest measured batch from which CUDA is faster at it and at every larger measured
  // batch; 2 x the largest measured batch when CUDA never wins.
  int64_t gpu_batch_threshold = 0;
  std::vector<CrossoverPoint> points;  // batch = 1, 2, 4, ..., max_batch
};

// Times bind at dimension `dim` on the CPU and on CUDA for batch 1, 2, 4, ..., max_batch.
// Throws std::runtime_error when CUDA is not available.
Crossover measure_crossover(int64_t dim, int64_t max_batch = 16384);

struct DevicePolicy {
  // Batches with at least this many vectors go to CUDA when it is available. The default only
  // keeps an uncalibrated policy on the CPU for small batches; use calibrated() for a
  // threshold measured on this machine.
  int64_t gpu_batch_threshold = 256;
  bool cuda_available = torch::cuda::is_available();

  // The threshold of measure_crossover(dim) on this machine; CPU-only without CUDA.
  static DevicePolicy calibrated(int64_t dim, int64_t max_batch = 16384);

  torch::Device choose(int64_t batch_size) const;
  // Moves `vectors` [..., D] to choose(number of vectors).
  torch::Tensor place(const torch::Tensor& vectors) const;
};

}  // namespace fieldbrain::hrr
