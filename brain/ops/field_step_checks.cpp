#include "brain/ops/field_step_checks.h"

#include <ATen/MemoryOverlap.h>
#include <c10/util/Exception.h>

#include "brain/ops/arg_check.h"

namespace fieldbrain {
namespace ops {
namespace {

// Inputs may be strided: the kernels copy a non-contiguous one (field_step.h, "Memory").
constexpr auto kCopied = ArgLayout::kStrided;

// Everything but the noise (or its key).
FieldStepShape check_common(ArgCheck& check, const at::Tensor& field, const at::Tensor& wave,
                            const at::Tensor& ef, const at::Tensor& scalars) {
  check.dims("field", field, 5, "[B,64,R,R,R]");
  const int64_t B = field.size(0), R = field.size(2);
  check("field", field, {B, 64, R, R, R}, at::kFloat, kCopied, "[B,64,R,R,R]");
  check("wave", wave, {B, R, R, R}, at::kFloat, kCopied, "[B,R,R,R]");
  check("ef", ef, {B, R, R, R}, at::kFloat, kCopied, "[B,R,R,R]");
  check("scalars", scalars, {B, 8}, at::kFloat, kCopied, "[B,8]");
  return {B, R};
}

}  // namespace

FieldStepShape check_field_step_args(const at::Tensor& field, const at::Tensor& noise,
                                     const at::Tensor& wave, const at::Tensor& ef,
                                     const at::Tensor& scalars, c10::DeviceType device) {
  ArgCheck check("fieldbrain::field_step", device);
  const auto shape = check_common(check, field, wave, ef, scalars);
  const int64_t B = shape.batch, R = shape.resolution;
  check("noise", noise, {B, 48, R, R, R}, at::kFloat, kCopied, "[B,48,R,R,R]");
  return shape;
}

FieldStepShape check_field_step_seeded_args(const at::Tensor& field, const at::Tensor& noise_key,
                                            const at::Tensor& wave, const at::Tensor& ef,
                                            const at::Tensor& scalars, c10::DeviceType device) {
  ArgCheck check("fieldbrain::field_step_seeded", device);
  const auto shape = check_common(check, field, wave, ef, scalars);
  check("noise_key", noise_key, {shape.batch, 2}, at::kLong, kCopied);
  return shape;
}

void check_noise_key(const at::Tensor& noise_key, int64_t batch, const at::Device& device,
                     const char* op) {
  ArgCheck check(op, device.type());
  check("noise_key", noise_key, {batch, 2}, at::kLong, kCopied);
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
