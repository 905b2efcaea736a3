// CUDA registration of fieldbrain::sensory_imprint_ (built with FIELDBRAIN_CUDA=ON against a
// CUDA LibTorch). The kernels are in sensory_imprint_kernel.cu; this file checks the arguments
// and launches on the current stream, with no host sync and no allocation.
#include "brain/ops/cuda/sensory_imprint_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/sensory_imprint.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

void sensory_imprint_cuda(at::Tensor& field, at::Tensor& occ, at::Tensor& map_data,
                          at::Tensor& map_loc, at::Tensor& strength, at::Tensor& scratch,
                          at::Tensor& plane_argmax, const at::Tensor& sensors,
                          const at::Tensor& facts, const at::Tensor& values, at::TensorList drive,
                          const at::Tensor& noise_key, at::TensorList tables) {
  const ImprintArrays a =
      imprint_arrays(field, occ, map_data, map_loc, strength, scratch, plane_argmax, sensors, facts,
                     values, drive, noise_key, tables, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field.device());
  launch_or_throw("fieldbrain::sensory_imprint_", launch_sensory_imprint, a);
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("sensory_imprint_", TORCH_FN(fieldbrain::ops::cuda::sensory_imprint_cuda));
}
