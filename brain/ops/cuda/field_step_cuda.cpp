// CUDA registration of fieldbrain::field_step / field_step_out (built with FIELDBRAIN_CUDA=ON
// against a CUDA LibTorch). The kernels are in field_step_kernel.cu; this file checks the
// arguments, keeps the workspace and launches on the current stream, with no host sync.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <map>
#include <mutex>
#include <tuple>

#include "brain/ops/cuda/field_step_cuda.h"
#include "brain/ops/cuda/launch.h"
#include "brain/ops/field_step_checks.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

// Workspace per (device, B, R), allocated on first use and reused: no allocation in steady
// state. Launches on one device are stream-ordered, so one workspace per shape suffices as
// long as callers use one stream per device (the brain does).
at::Tensor& workspace(const at::Tensor& field, int64_t B, int64_t R) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int64_t, int64_t>, at::Tensor> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& ws = cache[{field.get_device(), B, R}];
  if (!ws.defined()) {
    ws = at::empty({static_cast<int64_t>(field_step_workspace_floats(B, R))}, field.options());
  }
  return ws;
}

// The step with a noise tensor (float32) or a noise key (int64 [B,2], seeded).
at::Tensor& run_field_step(const FieldStepShape& shape, const at::Tensor& field_in,
                           const at::Tensor& noise_in, const at::Tensor& wave_in,
                           const at::Tensor& ef_in, const at::Tensor& scalars_in, at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(field_in.device());
  const at::Tensor field = field_in.contiguous(), noise = noise_in.contiguous(),
                   wave = wave_in.contiguous(), ef = ef_in.contiguous(),
                   scalars = scalars_in.contiguous();
  prepare_field_step_out(out, field, noise, wave, ef, scalars);
  FieldStepDeviceArgs a;
  a.field = field.data_ptr<float>();
  if (noise.scalar_type() == at::kLong) {
    a.noise_key = noise.data_ptr<int64_t>();
  } else {
    a.noise = noise.data_ptr<float>();
  }
  a.wave = wave.data_ptr<float>();
  a.ef = ef.data_ptr<float>();
  a.scalars = scalars.data_ptr<float>();
  a.out = out.data_ptr<float>();
  a.workspace = workspace(field, shape.batch, shape.resolution).data_ptr<float>();
  a.batch = shape.batch;
  a.resolution = shape.resolution;
  launch_or_throw("fieldbrain::field_step", launch_field_step, a);
  return out;
}

at::Tensor& field_step_out_cuda(const at::Tensor& field, const at::Tensor& noise,
                                const at::Tensor& wave, const at::Tensor& ef,
                                const at::Tensor& scalars, at::Tensor& out) {
  const auto shape = check_field_step_args(field, noise, wave, ef, scalars, c10::DeviceType::CUDA);
  return run_field_step(shape, field, noise, wave, ef, scalars, out);
}

at::Tensor& field_step_seeded_out_cuda(const at::Tensor& field, const at::Tensor& noise_key,
                                       const at::Tensor& wave, const at::Tensor& ef,
                                       const at::Tensor& scalars, at::Tensor& out) {
  const auto shape =
      check_field_step_seeded_args(field, noise_key, wave, ef, scalars, c10::DeviceType::CUDA);
  return run_field_step(shape, field, noise_key, wave, ef, scalars, out);
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("field_step_out", TORCH_FN(fieldbrain::ops::cuda::field_step_out_cuda));
  m.impl("field_step_seeded_out", TORCH_FN(fieldbrain::ops::cuda::field_step_seeded_out_cuda));
}
