// Argument checks shared by every device's kernel of fieldbrain::field_step: shapes of the
// contract (brain/field_dynamics.h), float32, one device, and the out tensor's requirements.
// Failures throw c10::Error with a message naming the argument.
#pragma once

#include <ATen/core/Tensor.h>

namespace fieldbrain {
namespace ops {

struct FieldStepShape {
  int64_t batch;
  int64_t resolution;
};

// field [B,64,R,R,R], noise [B,48,R,R,R], wave and ef [B,R,R,R], scalars [B,8], all float32
// on a device of type `device`.
FieldStepShape check_field_step_args(const at::Tensor& field, const at::Tensor& noise,
                                     const at::Tensor& wave, const at::Tensor& ef,
                                     const at::Tensor& scalars, c10::DeviceType device);

// fieldbrain::field_step_seeded: as above with noise_key, an int64 [B,2] tensor (seed, cycle
// per robot, brain/ops/philox.h) on the field's device, in place of the noise.
FieldStepShape check_field_step_seeded_args(const at::Tensor& field, const at::Tensor& noise_key,
                                            const at::Tensor& wave, const at::Tensor& ef,
                                            const at::Tensor& scalars, c10::DeviceType device);

// A noise key for B robots: int64 [B,2] on `device`; `op` names the operator in the message.
void check_noise_key(const at::Tensor& noise_key, int64_t batch, const at::Device& device,
                     const char* op);

// Resizes `out` to the field's shape if needed (a correctly sized out is left alone) and
// checks it is a contiguous float32 tensor on the field's device overlapping no input.
// (`noise` is the noise key for the seeded variant.)
void prepare_field_step_out(at::Tensor& out, const at::Tensor& field, const at::Tensor& noise,
                            const at::Tensor& wave, const at::Tensor& ef,
                            const at::Tensor& scalars);

}  // namespace ops
}  // namespace fieldbrain
