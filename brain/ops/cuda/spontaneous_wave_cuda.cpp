// CUDA registration of fieldbrain::spontaneous_wave_out (built with FIELDBRAIN_CUDA=ON against a
// CUDA LibTorch). The kernel is in spontaneous_wave_kernel.cu; this file checks the arguments
// and launches on the current stream, with no host sync.
#include "brain/ops/cuda/spontaneous_wave_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/spontaneous_wave.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

void spontaneous_wave_out_cuda(const at::Tensor& wave_vectors, const at::Tensor& wave_mask,
                               const at::Tensor& phase, at::Tensor& wave) {
  const auto [B, R] =
      check_spontaneous_wave_args(wave_vectors, wave_mask, phase, wave, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(wave.device());
  launch_or_throw("fieldbrain::spontaneous_wave_out", launch_spontaneous_wave,
                  wave_vectors.data_ptr<float>(), wave_mask.data_ptr<float>(),
                  phase.data_ptr<float>(), phase.stride(0), wave.data_ptr<float>(), B, R);
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("spontaneous_wave_out", TORCH_FN(fieldbrain::ops::cuda::spontaneous_wave_out_cuda));
}
