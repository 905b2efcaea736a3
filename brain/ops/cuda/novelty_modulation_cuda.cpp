// CUDA registration of fieldbrain::novelty_modulation_ (built with FIELDBRAIN_CUDA=ON against a
// CUDA LibTorch). The kernel is in novelty_modulation_kernel.cu; this file checks the arguments
// and launches on the current stream, with no host sync.
#include "brain/ops/cuda/novelty_modulation_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/novelty_modulation.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

void novelty_modulation_cuda(const at::Tensor& field, const at::Tensor& last_err,
                             const at::Tensor& activity_stats, const at::Tensor& facts,
                             const at::Tensor& value_facts, const at::Tensor& has_ef,
                             const at::Tensor& boost, at::Tensor& nov, at::Tensor& nov_ts,
                             at::Tensor& perr, at::Tensor& pimp, at::TensorList state,
                             at::Tensor& step_scalars) {
  const modulation::ModulationArrays a =
      check_novelty_modulation(field, last_err, activity_stats, facts, value_facts, has_ef, boost,
                               nov, nov_ts, perr, pimp, state, step_scalars, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field.device());
  launch_or_throw("fieldbrain::novelty_modulation_", launch_novelty_modulation, a,
                  field.size(0));
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("novelty_modulation_", TORCH_FN(fieldbrain::ops::cuda::novelty_modulation_cuda));
}
