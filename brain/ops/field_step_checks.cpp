#include "brain/ops/field_step_checks.h"

#include <ATen/MemoryOverlap.h>
#include <c10/util/Exception.h>

namespace fieldbrain {
namespace ops {
namespace {

void check_tensor(const at::Tensor& t, const char* name, at::IntArrayRef shape,
                  c10::DeviceType device) {
  TORCH_CHECK(t.defined(), "fieldbrain::field_step: ", name, " is undefined");
  TORCH_CHECK(t.device().type() == device, "fieldbrain::field_step: ", name, " must be on ",
              c10::DeviceTypeName(device), " like the field, got ", t.device());
  TORCH_CHECK(t.scalar_type() == at::kFloat, "fieldbrain::field_step: ", name,
              " must be float32, got ", t.scalar_type());
  TORCH_CHECK(t.sizes() == shape, "fieldbrain::field_step: ", name, " must have shape ", shape,
              ", got ", t.sizes());
}

// Everything but the noise (or its key).
FieldStepShape check_common(const at::Tensor& field, const at::Tensor& wave, const at::Tensor& ef,
                            const at::Tensor& scalars, c10::DeviceType device) {
  TORCH_CHECK(field.defined() && field.dim() == 5 && field.size(1) == 64 &&
                  field.size(2) == field.size(3) && field.size(2) == field.size(4),
              "fieldbrain::field_step: field must have shape [B,64,R,R,R], got ",
              field.defined() ? field.sizes() : at::IntArrayRef{});
  const int64_t B = field.size(0), R = field.size(2);
  check_tensor(field, "field", {B, 64, R, R, R}, device);
  check_tensor(wave, "wave", {B, R, R, R}, device);
  check_tensor(ef, "ef", {B, R, R, R}, device);
  check_tensor(scalars, "scalars", {B, 8}, device);
  TORCH_CHECK(field.device() == wave.device() && field.device() == ef.device() &&
                  field.device() == scalars.device(),
              "fieldbrain::field_step: all inputs must be on one device");
  return {B, R};
}

}  // namespace

FieldStepShape check_field_step_args(const at::Tensor& field, const at::Tensor& noise,
                                     const at::Tensor& wave, const at::Tensor& ef,
                                     const at::Tensor& scalars, c10::DeviceType device) {
  const auto shape = check_common(field, wave, ef, scalars, device);
  const int64_t B = shape.batch, R = shape.resolution;
  check_tensor(noise, "noise", {B, 48, R, R, R}, device);
  TORCH_CHECK(field.device() == noise.device(),
              "fieldbrain::field_step: all inputs must be on one device");
  return shape;
}

FieldStepShape check_field_step_seeded_args(const at::Tensor& field, const at::Tensor& noise_key,
                                            const at::Tensor& wave, const at::Tensor& ef,
                                            const at::Tensor& scalars, c10::DeviceType device) {
  const auto shape = check_common(field, wave, ef, scalars, device);
  check_noise_key(noise_key, shape.batch, field.device(), "fieldbrain::field_step_seeded");
  return shape;
}

void check_noise_key(const at::Tensor& noise_key, int64_t batch, const at::Device& device,
                     const char* op) {
  TORCH_CHECK(noise_key.defined(), op, ": noise_key is undefined");
  TORCH_CHECK(noise_key.scalar_type() == at::kLong, op, ": noise_key must be int64, got ",
              noise_key.scalar_type());
  TORCH_CHECK(noise_key.dim() == 2 && noise_key.size(0) == batch && noise_key.size(1) == 2, op,
              ": noise_key must have shape [", batch, ",2] (seed, cycle per robot), got ",
              noise_key.sizes());
  TORCH_CHECK(noise_key.device() == device, op, ": noise_key must be on ", device, ", got ",
              noise_key.device());
}

void prepare_field_step_out(at::Tensor& out, const at::Tensor& field, const at::Tensor& noise,
                            const at::Tensor& wave, const at::Tensor& ef,
                            const at::Tensor& scalars) {
  TORCH_CHECK(out.defined() && out.device() == field.device() && out.scalar_type() == at::kFloat,
              "fieldbrain::field_step_out: out must be a float32 tensor on ", field.device());
  if (out.sizes() != field.sizes()) out.resize_(field.sizes());
  TORCH_CHECK(out.is_contiguous(), "fieldbrain::field_step_out: out must be contiguous");
  for (const at::Tensor* t : {&field, &noise, &wave, &ef, &scalars}) at::assert_no_overlap(out, *t);
}

}  // namespace ops
}  // namespace fieldbrain
