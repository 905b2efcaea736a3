#include "hrr/device_policy.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "hrr/algebra.h"
#include "hrr/call_timing.h"
#include "hrr/random_vectors.h"

namespace fieldbrain::hrr {
namespace {

// Median of 7 synchronised calls after 2 warm-up calls (the first CUDA call pays for the
// cuFFT plan).
double median_bind_ms(const torch::Tensor& a, const torch::Tensor& b) {
  const bool cuda = a.is_cuda();
  TimingBudget budget;
  budget.warmup_calls = 2;
  budget.min_calls = 7;
  budget.max_calls = 7;
  budget.min_total_seconds = 3600;  // no time budget: exactly the 7 calls
  return median_call_ms(
      [&] {
        bind(a, b);
        if (cuda) torch::cuda::synchronize();
      },
      budget);
}

}  // namespace

Crossover measure_crossover(int64_t dim, int64_t max_batch) {
  if (!torch::cuda::is_available()) {
    throw std::runtime_error("measure_crossover: no CUDA device to compare the CPU with");
  }
  if (dim < 1 || max_batch < 1) throw std::invalid_argument("measure_crossover: dim and max_batch must be >= 1");
  torch::InferenceMode inference;
  torch::Generator gen = make_generator(42);
  Crossover out;
  out.dim = dim;
  for (int64_t batch = 1; batch <= max_batch; batch *= 2) {
    const torch::Tensor a = random({batch, dim}, gen), b = random({batch, dim}, gen);
    CrossoverPoint p;
    p.batch = batch;
    p.cpu_ms = median_bind_ms(a, b);
    p.cuda_ms = median_bind_ms(a.to(torch::kCUDA), b.to(torch::kCUDA));
    out.points.push_back(p);
  }
  // Walk down from the largest batch while CUDA keeps winning.
  out.gpu_batch_threshold = out.points.back().batch * 2;
  for (auto it = out.points.rbegin(); it != out.points.rend() && it->cuda_ms < it->cpu_ms; ++it) {
    out.gpu_batch_threshold = it->batch;
  }
  return out;
}

DevicePolicy DevicePolicy::calibrated(int64_t dim, int64_t max_batch) {
  DevicePolicy policy;
  if (!policy.cuda_available) return policy;  // every batch stays on the CPU
  policy.gpu_batch_threshold = measure_crossover(dim, max_batch).gpu_batch_threshold;
  return policy;
}

torch::Device DevicePolicy::choose(int64_t batch_size) const {
  if (batch_size < 0) throw std::invalid_argument("DevicePolicy: negative batch size");
  if (cuda_available && batch_size >= gpu_batch_threshold) return torch::Device(torch::kCUDA);
  return torch::Device(torch::kCPU);
}

torch::Tensor DevicePolicy::place(const torch::Tensor& vectors) const {
  const int64_t batch = vectors.dim() <= 1 ? 1 : vectors.numel() / vectors.size(-1);
  return vectors.to(choose(batch));
}

}  // namespace fieldbrain::hrr
