#include "brain/cycle_facts.h"

namespace fieldbrain {
namespace {

// A host staging tensor and its device twin (the same tensor when the device is the CPU).
void staged(const std::vector<int64_t>& shape, torch::Dtype dtype, const torch::Device& where,
            torch::Tensor& host, torch::Tensor& device) {
  const auto opts = torch::TensorOptions().dtype(dtype);
  if (where.is_cuda()) {
    host = torch::zeros(shape, opts.pinned_memory(true));
    device = torch::zeros(shape, opts.device(where));
  } else {
    host = torch::zeros(shape, opts);
    device = host;
  }
}

}  // namespace

void CycleFacts::allocate(int64_t batch, int64_t sensory_dim, const torch::Device& where,
                          int64_t attractor_slots) {
  staged({batch, kFactColumns}, torch::kLong, where, host, device);
  staged({batch, kValueColumns}, torch::kFloat, where, values_host, values);
  staged({batch, sensory_dim}, torch::kFloat, where, sensors_host, sensors);
  staged({batch, attractor_slots, 2}, torch::kFloat, where, attractor_weights_host, attractor_weights);
}

void CycleFacts::upload() {
  if (device.is_same(host)) return;
  device.copy_(host, /*non_blocking=*/true);
  values.copy_(values_host, /*non_blocking=*/true);
  sensors.copy_(sensors_host, /*non_blocking=*/true);
  attractor_weights.copy_(attractor_weights_host, /*non_blocking=*/true);
}

std::vector<torch::Tensor> CycleFacts::tensors() const {
  std::vector<torch::Tensor> out{host, values_host, sensors_host, attractor_weights_host};
  if (!device.is_same(host)) {
    out.push_back(device);
    out.push_back(values);
    out.push_back(sensors);
    out.push_back(attractor_weights);
  }
  return out;
}

}  // namespace fieldbrain
