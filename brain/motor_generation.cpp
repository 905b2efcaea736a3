#include "brain/motor_generation.h"

#include <limits>

namespace fieldbrain {

MotorGenerationImpl::MotorGenerationImpl(MotorGenerationOptions options_) : options(std::move(options_)) {
  motor = register_buffer("motor", torch::zeros({options.batch(), options.motor_dim()},
                                                torch::TensorOptions(torch::kFloat).device(options.device())));
}

const torch::Tensor& MotorGenerationImpl::generate(const torch::Tensor& field, const torch::Tensor& explore,
                                                   const torch::Tensor& eps_extra,
                                                   const torch::Tensor& eps_explore) {
  const int64_t B = options.batch(), M = options.motor_dim();
  const int64_t R = field.size(2);
  const auto Xc = field.slice(1, 0, 32);
  // Face difference along one axis: mean of the last slice minus mean of the first.
  auto gradient = [&](int64_t dim) {
    return Xc.select(dim, R - 1).mean({1, 2, 3}) - Xc.select(dim, 0).mean({1, 2, 3});
  };
  auto t = torch::zeros({B, M}, field.options());
  if (M >= 2) {
    t.select(1, 0).copy_(gradient(2) * 5);
    t.select(1, 1).copy_(gradient(3) * 5);
  }
  if (M >= 4) t.select(1, 3).copy_(gradient(4) * 0.5);
  if (M > 4) t.slice(1, 4, M).copy_(eps_extra * 0.1);
  t = t + eps_explore * explore.unsqueeze(1) * 0.3;
  motor.copy_(torch::tanh(t));
  // The field's health rides on the motors to the host, as on the fast path (the fused
  // prediction_act, brain/ops/prediction_math.h): a robot whose field holds a NaN or an Inf
  // (its mean |F| is not finite) gets NaN motors, which the caller sees in the cycle's copy.
  const auto healthy =
      torch::isfinite(field.abs().mean({1, 2, 3, 4}, /*keepdim=*/false, torch::kDouble));
  motor.masked_fill_(healthy.logical_not().unsqueeze(1), std::numeric_limits<float>::quiet_NaN());
  return motor;
}

}  // namespace fieldbrain
