// Argument checks of fieldbrain::field_step_out, field_step_seeded_out and philox_normal_out
// (brain/ops/field_step.h): shapes of the contract (brain/field_dynamics.h), float32, one
// device, the out tensor's requirements; what their kernels on every device take, and the
// results of the allocating variants. Failures throw c10::Error naming the argument.
#include "brain/ops/field_step.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include "brain/ops/arg_check.h"

namespace fieldbrain {
namespace ops {
namespace {

// Inputs may be strided: the kernels copy a non-contiguous one (field_step.h, "Memory").
constexpr auto kCopied = ArgLayout::kStrided;

struct FieldStepShape {
  int64_t batch;
  int64_t resolution;
};

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

// A noise key for B robots: int64 [B,2] on `device`; `op` names the operator in the message.
void check_noise_key(const at::Tensor& noise_key, int64_t batch, const at::Device& device,
                     const char* op) {
  ArgCheck check(op, device.type());
  check("noise_key", noise_key, {batch, 2}, at::kLong, kCopied);
  TORCH_CHECK(noise_key.device() == device, op, ": noise_key must be on ", device, ", got ",
              noise_key.device());
}

// Resizes `out` to the field's shape if needed (a correctly sized out is left alone) and
// checks it is a contiguous float32 tensor on the field's device overlapping no input.
void prepare_out(at::Tensor& out, const at::Tensor* inputs) {
  const at::Tensor& field = inputs[0];
  TORCH_CHECK(out.defined() && out.device() == field.device() && out.scalar_type() == at::kFloat,
              "fieldbrain::field_step_out: out must be a float32 tensor on ", field.device());
  if (out.sizes() != field.sizes()) out.resize_(field.sizes());
  TORCH_CHECK(out.is_contiguous(), "fieldbrain::field_step_out: out must be contiguous");
  for (int k = 0; k < 5; ++k) at::assert_no_overlap(out, inputs[k]);
}

// The checked step's pointers; the noise is a float32 tensor, or an int64 key when seeded.
FieldStepPrepared prepared_step(const FieldStepShape& shape, const at::Tensor& field,
                                const at::Tensor& noise, const at::Tensor& wave,
                                const at::Tensor& ef, const at::Tensor& scalars, at::Tensor& out) {
  FieldStepPrepared p;
  // Copies only when an input is not contiguous.
  p.copies[0] = field.contiguous();
  p.copies[1] = noise.contiguous();
  p.copies[2] = wave.contiguous();
  p.copies[3] = ef.contiguous();
  p.copies[4] = scalars.contiguous();
  prepare_out(out, p.copies);
  p.field = p.copies[0].data_ptr<float>();
  if (p.copies[1].scalar_type() == at::kLong) {
    p.noise_key = p.copies[1].data_ptr<int64_t>();
  } else {
    p.noise = p.copies[1].data_ptr<float>();
  }
  p.wave = p.copies[2].data_ptr<float>();
  p.ef = p.copies[3].data_ptr<float>();
  p.scalars = p.copies[4].data_ptr<float>();
  p.out = out.data_ptr<float>();
  p.batch = shape.batch;
  p.resolution = shape.resolution;
  return p;
}

}  // namespace

FieldStepPrepared FieldStepOut::prepare(c10::DeviceType device, const at::Tensor& field,
                                        const at::Tensor& noise, const at::Tensor& wave,
                                        const at::Tensor& ef, const at::Tensor& scalars,
                                        at::Tensor& out) {
  ArgCheck check("fieldbrain::field_step", device);
  const auto shape = check_common(check, field, wave, ef, scalars);
  const int64_t B = shape.batch, R = shape.resolution;
  check("noise", noise, {B, 48, R, R, R}, at::kFloat, kCopied, "[B,48,R,R,R]");
  return prepared_step(shape, field, noise, wave, ef, scalars, out);
}

FieldStepPrepared FieldStepSeededOut::prepare(c10::DeviceType device, const at::Tensor& field,
                                              const at::Tensor& noise_key, const at::Tensor& wave,
                                              const at::Tensor& ef, const at::Tensor& scalars,
                                              at::Tensor& out) {
  ArgCheck check("fieldbrain::field_step_seeded", device);
  const auto shape = check_common(check, field, wave, ef, scalars);
  check("noise_key", noise_key, {shape.batch, 2}, at::kLong, kCopied);
  return prepared_step(shape, field, noise_key, wave, ef, scalars, out);
}

// The allocating variants are composites over the _out kernels, registered once for every
// device (CompositeExplicitAutograd): one allocation, the result, shaped as the field.
at::Tensor FieldStep::empty_result(const at::Tensor& field) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_step: field is undefined");
  ArgCheck("fieldbrain::field_step", field.device().type()).dims("field", field, 5, "[B,64,R,R,R]");
  return at::empty(field.sizes(), field.options());
}

at::Tensor FieldStepSeeded::empty_result(const at::Tensor& field) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_step_seeded: field is undefined");
  ArgCheck("fieldbrain::field_step_seeded", field.device().type())
      .dims("field", field, 5, "[B,64,R,R,R]");
  return at::empty(field.sizes(), field.options());
}

PhiloxNormalPrepared PhiloxNormalOut::prepare(c10::DeviceType device, const at::Tensor& noise_key,
                                              int64_t stream, at::Tensor& out) {
  constexpr const char* kOp = "fieldbrain::philox_normal_out";
  TORCH_CHECK(out.defined() && out.dim() >= 1, kOp, ": out must be a tensor [B, ...]");
  TORCH_CHECK(out.scalar_type() == at::kFloat && out.is_contiguous() &&
                  out.device().type() == device,
              kOp, ": out must be a contiguous float32 ", c10::DeviceTypeName(device), " tensor");
  TORCH_CHECK(stream >= 0 && stream <= 0xFFFFFFFFLL, kOp, ": stream ", stream,
              " is not a 32-bit word");
  const int64_t B = out.size(0);
  check_noise_key(noise_key, B, out.device(), kOp);
  PhiloxNormalPrepared p;
  p.key_copy = noise_key.contiguous();
  p.key = p.key_copy.data_ptr<int64_t>();
  p.stream = static_cast<uint32_t>(stream);
  p.batch = B;
  p.per_robot = B > 0 ? out.numel() / B : 0;
  p.out = out.data_ptr<float>();
  return p;
}

}  // namespace ops
}  // namespace fieldbrain
