#include "brain/legacy/motor_generation.h"

#include <array>
#include <cmath>

#include "brain/legacy/exact_block_sums.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

namespace {
// _extract_motor_tendencies_from_field
torch::Tensor extract_motor_tendencies(const torch::Tensor& field, int64_t motor_dim,
                                       at::Generator& gen, bool has_strategic_pattern) {
  // the means of the content's first and last planes along each axis and the pattern's mean
  // |value|: exact_block_sums' loops over the field's memory (torch.mean's floats)
  TORCH_CHECK(field.dim() == 4 && field.is_contiguous() && field.size(3) >= 48,
              "extract_motor_tendencies: a contiguous [R, R, R, >= 48] field");
  const int64_t R0 = field.size(0), R1 = field.size(1), R2 = field.size(2);
  const float* f = field.data_ptr<float>();
  const std::array<int64_t, 3> strides = {field.stride(0), field.stride(1), field.stride(2)};
  // content[i] (axis 0), content[:, i] (axis 1), content[:, :, i] (axis 2): one plane
  auto plane_mean = [&](int axis, int64_t i) {
    FieldBlock b;
    b.data = f + i * strides[axis];
    b.sizes = {R0, R1, R2};
    b.sizes[axis] = 1;
    b.strides = strides;
    b.channels = 32;
    return exact_block_mean(b);
  };
  double x_grad = 0.0, y_grad = 0.0, z_grad = 0.0;
  if (R0 > 1) x_grad = static_cast<double>(plane_mean(0, R0 - 1) - plane_mean(0, 0));
  if (R1 > 1) y_grad = static_cast<double>(plane_mean(1, R1 - 1) - plane_mean(1, 0));
  if (R2 > 1) z_grad = static_cast<double>(plane_mean(2, R2 - 1) - plane_mean(2, 0));
  double pattern_strength = 0.0;
  if (has_strategic_pattern) {
    FieldBlock b;
    b.data = f + 32;
    b.sizes = {R0, R1, R2};
    b.strides = strides;
    b.channels = 16;
    pattern_strength = static_cast<double>(exact_block_abs_mean(b));
  }
  torch::Tensor t = torch::zeros({motor_dim}, torch::kFloat32);
  float* p = t.data_ptr<float>();
  const double gradient_amplification = 5.0;
  if (motor_dim >= 2) {
    p[0] = static_cast<float>(x_grad * gradient_amplification);
    p[1] = static_cast<float>(y_grad * gradient_amplification);
  }
  if (motor_dim >= 3) p[2] = static_cast<float>(pattern_strength);
  if (motor_dim >= 4) p[3] = static_cast<float>(z_grad * 0.5);
  for (int64_t i = 4; i < motor_dim; ++i)
    p[i] = static_cast<float>(at::randn({1}, gen, torch::kFloat32).item<double>() * 0.1);
  return t;
}
}  // namespace

// UnifiedFieldBrain._generate_motor_action
std::vector<double> generate_motor_action(const torch::Tensor& field, int64_t motor_dim,
                                          double exploration_drive, at::Generator& gen,
                                          bool has_strategic_pattern) {
  torch::Tensor tendencies = extract_motor_tendencies(field, motor_dim, gen, has_strategic_pattern);
  if (exploration_drive > 0) {
    torch::Tensor noise = at::randn({motor_dim}, gen, torch::kFloat32) * exploration_drive * 0.3;
    tendencies = tendencies + noise;
  }
  torch::Tensor motor = torch::tanh(tendencies);
  const float* m = motor.data_ptr<float>();
  return std::vector<double>(m, m + motor_dim);
}

// UnifiedFieldBrain._echo_motor_to_field (+ _motor_to_spatial_pattern)
void echo_motor_to_field(torch::Tensor& field, const std::vector<double>& motor) {
  // one walk over channels 62 and 63 with the ATen ops' float32 roundings:
  // f62 = f62 * 0.95 + pattern * 0.3, pattern = (0 + m0 * lin[z]) + m1 * lin[y];
  // f63 = f63 * 0.95 + magnitude * 0.2
  const int64_t R = field.size(0), C = field.size(3);
  TORCH_CHECK(field.is_contiguous(), "echo_motor_to_field: the field must be contiguous");
  torch::Tensor lin_t = torch::linspace(-1, 1, R, torch::kFloat32);
  const float* lin = lin_t.data_ptr<float>();
  const bool has_pattern = motor.size() >= 2;
  const auto m0 = static_cast<float>(has_pattern ? motor[0] : 0.0);
  const auto m1 = static_cast<float>(has_pattern ? motor[1] : 0.0);
  double sum = 0.0;
  for (double v : motor) sum += std::abs(v);
  const double magnitude = sum / static_cast<double>(motor.size());
  const auto add63 = static_cast<float>(magnitude * 0.2);
  const auto keep = static_cast<float>(0.95), gain = static_cast<float>(0.3);
  float* f = field.data_ptr<float>();
  for (int64_t x = 0; x < R; ++x)
    for (int64_t y = 0; y < R; ++y)
      for (int64_t z = 0; z < R; ++z) {
        float* v = f + ((x * R + y) * R + z) * C;
        const float pattern = has_pattern ? (0.0f + m0 * lin[z]) + m1 * lin[y] : 0.0f;
        v[62] = v[62] * keep + pattern * gain;
        v[63] = v[63] * keep + add63;
      }
}

}  // namespace fieldbrain::legacy
