#include "hrr/device_policy.h"

#include <stdexcept>

namespace fieldbrain::hrr {

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
