// CUDA registration of fieldbrain::prediction_score / prediction_act (built with
// FIELDBRAIN_CUDA=ON against a CUDA LibTorch). The kernels are in prediction_kernel.cu; this
// file checks the arguments and launches on the current stream, with no host sync.
#include "brain/ops/cuda/prediction_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/prediction.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

void prediction_score_cuda(const at::Tensor& sensors, const at::Tensor& facts,
                           const at::Tensor& n_active, const at::Tensor& pred, at::Tensor& conf,
                           at::Tensor& last_err) {
  const prediction::ScoreArgs a = prediction_score_args(sensors, facts, n_active, pred, conf,
                                                        last_err, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(sensors.device());
  launch_or_throw("fieldbrain::prediction_score", launch_prediction_score, a, sensors.size(0));
}

void prediction_act_cuda(const at::Tensor& readout, const at::Tensor& facts,
                         const at::Tensor& noise_key, const at::Tensor& sensors,
                         const at::Tensor& W, const at::Tensor& herr0, const at::Tensor& herr1,
                         const at::Tensor& herr2, const at::Tensor& herr3,
                         const at::Tensor& explore, const at::Tensor& lin, at::Tensor& recent,
                         at::Tensor& active, at::Tensor& n_active, at::Tensor& temporal,
                         at::Tensor& hpred, at::Tensor& pred, at::Tensor& pc, at::Tensor& motor,
                         at::Tensor& field) {
  const prediction::ActArgs a = prediction_act_args(
      readout, facts, noise_key, sensors, W, herr0, herr1, herr2, herr3, explore, lin, recent,
      active, n_active, temporal, hpred, pred, pc, motor, field, c10::DeviceType::CUDA);
  // The echo's grid has the robot on blockIdx.y.
  TORCH_CHECK(sensors.size(0) <= 65535, "fieldbrain::prediction_act (CUDA): at most 65535 robots, got ",
              sensors.size(0));
  const c10::cuda::CUDAGuard guard(sensors.device());
  launch_or_throw("fieldbrain::prediction_act", launch_prediction_act, a, sensors.size(0));
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("prediction_score", TORCH_FN(fieldbrain::ops::cuda::prediction_score_cuda));
  m.impl("prediction_act", TORCH_FN(fieldbrain::ops::cuda::prediction_act_cuda));
}
