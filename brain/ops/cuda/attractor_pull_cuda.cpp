// CUDA registration of fieldbrain::attractor_record_ / attractor_pull_ (built with
// FIELDBRAIN_CUDA=ON against a CUDA LibTorch). The kernels are in attractor_pull_kernel.cu; this
// file checks the arguments and launches on the current stream, with no host sync.
#include "brain/ops/cuda/attractor_pull_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/attractor_pull.h"
#include "brain/ops/cuda/launch.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

void attractor_record_cuda(at::Tensor& bank, const at::Tensor& field, const at::Tensor& slot) {
  const auto shape = check_attractor_record_args(bank, field, slot, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field.device());
  launch_or_throw("fieldbrain::attractor_record_", launch_attractor_record,
                  bank.data_ptr<float>(), field.data_ptr<float>(), slot.data_ptr<int64_t>(),
                  slot.stride(0), shape.batch, shape.slots, shape.resolution);
}

void attractor_pull_cuda(at::Tensor& field, const at::Tensor& bank, const at::Tensor& weights,
                         at::Tensor& workspace) {
  const auto shape = check_attractor_pull_args(field, bank, weights, workspace, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field.device());
  launch_or_throw("fieldbrain::attractor_pull_", launch_attractor_pull, field.data_ptr<float>(),
                  bank.data_ptr<float>(), weights.data_ptr<float>(),
                  workspace.data_ptr<double>(), shape.batch, shape.slots, shape.resolution);
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("attractor_record_", TORCH_FN(fieldbrain::ops::cuda::attractor_record_cuda));
  m.impl("attractor_pull_", TORCH_FN(fieldbrain::ops::cuda::attractor_pull_cuda));
}
