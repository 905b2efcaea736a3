// Motor generation (docs/cycle.md step 10; legacy §3.12): the motors follow the activity
// gradient across the faces of the spatial channels, plus exploration noise. Always M values.
#pragma once

#include <torch/torch.h>

namespace fieldbrain {

struct MotorGenerationOptions {
  MotorGenerationOptions(int64_t batch, int64_t motor_dim) : batch_(batch), motor_dim_(motor_dim) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, motor_dim);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

class MotorGenerationImpl : public torch::nn::Module {
 public:
  explicit MotorGenerationImpl(MotorGenerationOptions options);

  // eps_extra [B,max(M-4,0)] and eps_explore [B,M] are draws 3 and 4 of the cycle;
  // explore [B]. Writes and returns `motor` [B,M] in (-1,1).
  const torch::Tensor& generate(const torch::Tensor& field, const torch::Tensor& explore,
                                const torch::Tensor& eps_extra, const torch::Tensor& eps_explore);

  // On the fast path: `readout` [B,K] is the fused read-out (brain/ops/field_readout.h),
  // rewritten in place every cycle before generate(), which then takes the face gradients
  // (gx, gy, gz) from its columns [first, first + 3) instead of reducing the field. The tensor
  // handle itself is kept (not a view of it), so it follows BrainGroup's row views of it.
  // Undefined (the default, the reference path): generate() computes them with ATen ops.
  void read_gradients_from(const torch::Tensor& readout, int64_t first) {
    readout_ = readout;
    gradient_column_ = first;
  }

  MotorGenerationOptions options;
  torch::Tensor motor;  // [B,M] the last motor command

 private:
  torch::Tensor readout_;
  int64_t gradient_column_ = 0;
};
TORCH_MODULE(MotorGeneration);

}  // namespace fieldbrain
