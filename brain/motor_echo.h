// Motor echo (docs/cycle.md step 11; legacy §3.14): the motor command is written back into
// the last two dynamics channels, so the field feels what the robot did.
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"

namespace fieldbrain {

struct MotorEchoOptions {
  MotorEchoOptions(int64_t motor_dim, int64_t resolution) : motor_dim_(motor_dim), resolution_(resolution) {}
  TORCH_ARG(int64_t, motor_dim);
  TORCH_ARG(int64_t, resolution);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class MotorEchoImpl : public BrainModule {
 public:
  explicit MotorEchoImpl(MotorEchoOptions options);
  void set_batch(int64_t) override {}  // no per-robot state
  // field [B,64,R,R,R] updated in place from motor [B,M].
  void apply(torch::Tensor& field, const torch::Tensor& motor) const;
  // linspace(-1, 1, R) [R] on the device (the fused echo of fieldbrain::prediction_act reads it).
  const torch::Tensor& lin() const { return lin_; }

  MotorEchoOptions options;

 private:
  torch::Tensor lin_;  // [R] linspace(-1, 1, R)
};
TORCH_MODULE(MotorEcho);

}  // namespace fieldbrain
