// CUDA registration of fieldbrain::hierarchy_observe_, hierarchy_apply_ and error_field_update_
// (built with FIELDBRAIN_CUDA=ON against a CUDA LibTorch). The kernels are in
// hierarchy_learn_kernel.cu; this file checks the arguments and launches on the current
// stream, with no host sync and no copy.
#include "brain/ops/cuda/hierarchy_learn_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "brain/ops/cuda/launch.h"
#include "brain/ops/hierarchy_learn.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

void hierarchy_observe_cuda(const at::Tensor& field, const at::Tensor& sensors,
                            const at::Tensor& facts, const at::Tensor& hpred,
                            const at::Tensor& hist, const at::Tensor& herr0,
                            const at::Tensor& herr1, const at::Tensor& herr2,
                            const at::Tensor& herr3, const at::Tensor& W,
                            const at::Tensor& pending) {
  const at::Tensor herr[4] = {herr0, herr1, herr2, herr3};
  const auto [B, S] = check_hierarchy_observe_args(field, sensors, facts, hpred, hist, herr, W,
                                                   pending, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field.device());
  HierarchyObserveArgs args{};
  args.field = field.data_ptr<float>();
  args.sensors = sensors.data_ptr<float>();
  args.facts = facts.data_ptr<int64_t>();
  args.hpred = hpred.data_ptr<float>();
  args.hist = hist.data_ptr<float>();
  for (int k = 0; k < 4; ++k) args.herr[k] = herr[k].data_ptr<float>();
  args.W = W.data_ptr<float>();
  args.pending = pending.data_ptr<float>();
  args.batch = B;
  args.sensory_dim = S;
  args.resolution = field.size(2);
  launch_or_throw("fieldbrain::hierarchy_observe_", launch_hierarchy_observe, args);
}

void hierarchy_apply_cuda(const at::Tensor& field, const at::Tensor& pending) {
  const auto [B, R] = check_hierarchy_apply_args(field, pending, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(field.device());
  launch_or_throw("fieldbrain::hierarchy_apply_", launch_hierarchy_apply,
                  field.data_ptr<float>(), pending.data_ptr<float>(), B, R, pending.size(1));
}

void error_field_update_cuda(const at::Tensor& e, const at::Tensor& facts, const at::Tensor& ef,
                             const at::Tensor& has_ef, const at::Tensor& boost) {
  const auto [B, R] = check_error_field_args(e, facts, ef, has_ef, boost, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard guard(e.device());
  launch_or_throw("fieldbrain::error_field_update_", launch_error_field_update,
                  e.data_ptr<float>(), facts.data_ptr<int64_t>(), ef.data_ptr<float>(),
                  has_ef.data_ptr<float>(), boost.data_ptr<float>(), B, e.size(1), R);
}

}  // namespace
}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  m.impl("hierarchy_observe_", TORCH_FN(fieldbrain::ops::cuda::hierarchy_observe_cuda));
  m.impl("hierarchy_apply_", TORCH_FN(fieldbrain::ops::cuda::hierarchy_apply_cuda));
  m.impl("error_field_update_", TORCH_FN(fieldbrain::ops::cuda::error_field_update_cuda));
}
