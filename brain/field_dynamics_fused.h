// The fused cycle's field step (docs/cycle.md step 7, items 1-8): the state of FieldDynamics
// (brain/field_dynamics.h), the wave by fieldbrain::spontaneous_wave_out and the step by
// fieldbrain::field_step_seeded_out, its noise made inside the kernel: no tensor created.
#pragma once

#include "brain/field_dynamics.h"

namespace fieldbrain {

class FusedFieldDynamicsImpl : public FieldDynamicsState {
 public:
  // Throws std::invalid_argument when the fused operator is not registered.
  explicit FusedFieldDynamicsImpl(FieldDynamicsOptions options);

  // wave [B,R,R,R] for phases phi [B] (= 0.1 * cycle), written into the wave buffer by the
  // fieldbrain::spontaneous_wave_out operator (no tensor created).
  const torch::Tensor& compute_wave(const torch::Tensor& phi);

  // The field step (contract of field_step_reference) with the noise made inside the operator
  // from noise_key [B,2] int64 (seed, cycle): fieldbrain::field_step_seeded_out into `next`
  // (no allocation in steady state).
  const torch::Tensor& step_seeded(const torch::Tensor& field, const torch::Tensor& noise_key,
                                   const torch::Tensor& wave, const torch::Tensor& ef,
                                   const torch::Tensor& scalars);

  // [B,64,R,R,R] output of step_seeded. Per-robot scratch, not a buffer: registered
  // (brain/brain_module.h), so row views re-point it with the field.
  torch::Tensor next;
};
TORCH_MODULE(FusedFieldDynamics);

}  // namespace fieldbrain
