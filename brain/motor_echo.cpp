#include "brain/motor_echo.h"

namespace fieldbrain {

MotorEchoImpl::MotorEchoImpl(MotorEchoOptions options_) : options(std::move(options_)) {
  lin_ = torch::linspace(-1, 1, options.resolution(), torch::kFloat).to(options.device());
}

void MotorEchoImpl::apply(torch::Tensor& field, const torch::Tensor& motor) const {
  const int64_t B = field.size(0), R = options.resolution();
  auto c62 = field.select(1, 62);
  auto c63 = field.select(1, 63);
  c62.mul_(0.95);
  c63.mul_(0.95);
  if (options.motor_dim() >= 2) {
    const auto m0 = motor.select(1, 0).view({B, 1, 1, 1});
    const auto m1 = motor.select(1, 1).view({B, 1, 1, 1});
    c62.add_((m0 * lin_.view({1, 1, 1, R}) + m1 * lin_.view({1, 1, R, 1})) * 0.3);
  }
  c63.add_((motor.abs().mean(1) * 0.2).view({B, 1, 1, 1}));
}

}  // namespace fieldbrain
