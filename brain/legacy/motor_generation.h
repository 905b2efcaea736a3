// em-brain's motor path of UnifiedFieldBrain: _generate_motor_action (+
// _extract_motor_tendencies_from_field), read from the content channels' face differences plus
// exploration noise, and _echo_motor_to_field (+ _motor_to_spatial_pattern), the motor command
// written back into channels 62/63.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace fieldbrain::legacy {

// _generate_motor_action: M motors as the original's Python floats. Draws (M-4) x randn(1)
// then randn(M) (when exploration_drive > 0) from `gen`. `pattern_strength` is 0 without a
// strategic pattern.
std::vector<double> generate_motor_action(const torch::Tensor& field, int64_t motor_dim,
                                          double exploration_drive, at::Generator& gen,
                                          bool has_strategic_pattern = false);

// _echo_motor_to_field (in place).
void echo_motor_to_field(torch::Tensor& field, const std::vector<double>& motor);

}  // namespace fieldbrain::legacy
