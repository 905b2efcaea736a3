// CUDA registration of fieldbrain::field_readout / field_readout_out (built with
// FIELDBRAIN_CUDA=ON against a CUDA LibTorch). The kernels are in field_readout_kernel.cu; this
// file checks the arguments and launches on the current stream, with no host sync.
#include "brain/ops/cuda/field_readout_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/field_readout.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

at::Tensor& field_readout_out_cuda(const at::Tensor& field_in, at::Tensor& out) {
  const auto [B, R] = check_field_readout_field(field_in, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field_in.device());
  const at::Tensor field = field_in.contiguous();
  prepare_field_readout_out(out, field);
  launch_or_throw("fieldbrain::field_readout", launch_field_readout, field.data_ptr<float>(),
                  out.data_ptr<float>(), B, R);
  return out;
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("field_readout_out", TORCH_FN(fieldbrain::ops::cuda::field_readout_out_cuda));
}
