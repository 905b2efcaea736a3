// FieldStrategicPlanner._evolve_field_with_pattern, the step a discovery simulates 3,200 times
// (32 candidates x 100 steps): once as the original's ATen calls, once fused into one pass over
// the field (its 48 single-channel conv3d calls, decay, pattern refresh and pull) that rounds
// each float32 operation as those calls do, leaving ATen the tanh, the mean and the draw.
#pragma once

#include <torch/torch.h>

namespace fieldbrain::legacy {

// _create_diffusion_kernel: [1,1,3,3,3], a 7-point Laplacian times 0.05.
torch::Tensor planner_diffusion_kernel();

// One step, the original's ATen calls in its order. field [R,R,R,64], pattern [R,R,R,16].
torch::Tensor planner_evolve_aten(const torch::Tensor& field, const torch::Tensor& pattern,
                                  const torch::Tensor& kernel, at::Generator& gen);
// The same step fused; equal bit for bit where planner_fused_step_is_exact().
torch::Tensor planner_evolve_fused(const torch::Tensor& field, const torch::Tensor& pattern,
                                   const torch::Tensor& kernel, at::Generator& gen);

// Whether this LibTorch's conv3d sums the kernel's taps as the fused step does (checked once, on
// a random field, against planner_evolve_aten): the planner uses the fused step only then.
bool planner_fused_step_is_exact();

}  // namespace fieldbrain::legacy
