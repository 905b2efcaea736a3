// CUDA registration of fieldbrain::philox_normal_out (FIELDBRAIN_CUDA=ON): checks, then the
// launch of cuda/philox_normal_kernel.cu on the current stream. Allocates nothing, no host sync.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/cuda/philox_normal_cuda.h"
#include "brain/ops/field_step_checks.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

at::Tensor& philox_normal_out_cuda(const at::Tensor& noise_key, int64_t stream, at::Tensor& out) {
  constexpr const char* kOp = "fieldbrain::philox_normal_out";
  TORCH_CHECK(out.defined() && out.dim() >= 1, kOp, ": out must be a tensor [B, ...]");
  TORCH_CHECK(out.scalar_type() == at::kFloat && out.is_contiguous() && out.is_cuda(), kOp,
              ": out must be a contiguous float32 CUDA tensor");
  TORCH_CHECK(stream >= 0 && stream <= 0xFFFFFFFFLL, kOp, ": stream ", stream,
              " is not a 32-bit word");
  const int64_t B = out.size(0);
  check_noise_key(noise_key, B, out.device(), kOp);
  if (out.numel() == 0) return out;
  const c10::cuda::CUDAGuard guard(out.device());
  const at::Tensor key = noise_key.contiguous();
  launch_or_throw(kOp, launch_philox_normal, key.data_ptr<int64_t>(),
                  static_cast<uint32_t>(stream), B, out.numel() / B, out.data_ptr<float>());
  return out;
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("philox_normal_out", TORCH_FN(fieldbrain::ops::cuda::philox_normal_out_cuda));
}
