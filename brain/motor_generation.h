// Motor generation (docs/cycle.md step 10; legacy §3.12): the motors follow the activity
// gradient across the faces of the spatial channels, plus exploration noise. Always M values.
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"

namespace fieldbrain {

struct MotorGenerationOptions {
  MotorGenerationOptions(int64_t batch, int64_t motor_dim) : batch_(batch), motor_dim_(motor_dim) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, motor_dim);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class MotorGenerationImpl : public BrainModule {
 public:
  explicit MotorGenerationImpl(MotorGenerationOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // eps_extra [B,max(M-4,0)] and eps_explore [B,M] are draws 3 and 4 of the cycle;
  // explore [B]. Writes and returns `motor` [B,M] in (-1,1), or NaN for every motor of a robot
  // whose field is not finite (the cycle's health check, no extra copy). The reference path;
  // on the fast path fieldbrain::prediction_act writes `motor`
  // (FusedNextInputPredictionImpl::predict_and_act).
  const torch::Tensor& generate(const torch::Tensor& field, const torch::Tensor& explore,
                                const torch::Tensor& eps_extra, const torch::Tensor& eps_explore);

  MotorGenerationOptions options;
  torch::Tensor motor;  // [B,M] the last motor command (the buffer the cycle copies out)
};
TORCH_MODULE(MotorGeneration);

}  // namespace fieldbrain
