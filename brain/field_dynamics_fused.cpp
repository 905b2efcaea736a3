#include "brain/field_dynamics_fused.h"

#include <stdexcept>

#include <ATen/core/dispatch/Dispatcher.h>

#include "brain/ops/field_step.h"
#include "brain/ops/spontaneous_wave.h"

namespace fieldbrain {

FusedFieldDynamicsImpl::FusedFieldDynamicsImpl(FieldDynamicsOptions options_)
    : FieldDynamicsState(std::move(options_)) {
  const int64_t B = options.batch(), R = options.resolution();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  next = register_scratch(torch::empty({B, 64, R, R, R}, opts));
  if (!c10::Dispatcher::singleton().findSchema({"fieldbrain::field_step_seeded_out", ""}).has_value()) {
    throw std::invalid_argument(
        "brain config: field_step = \"fast\" but the fieldbrain::field_step operator is not "
        "registered (link the fieldbrain ops library)");
  }
}

const torch::Tensor& FusedFieldDynamicsImpl::compute_wave(const torch::Tensor& phi) {
  ops::spontaneous_wave_out(wave_vectors, wave_mask, phi, wave);
  return wave;
}

const torch::Tensor& FusedFieldDynamicsImpl::step_seeded(const torch::Tensor& field,
                                                         const torch::Tensor& noise_key,
                                                         const torch::Tensor& wave_,
                                                         const torch::Tensor& ef,
                                                         const torch::Tensor& scalars) {
  ops::field_step_seeded_out(field, noise_key, wave_, ef, scalars, next);
  return next;
}

}  // namespace fieldbrain
