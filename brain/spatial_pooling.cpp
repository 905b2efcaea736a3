#include "brain/spatial_pooling.h"

namespace fieldbrain {

SpatialPoolingImpl::SpatialPoolingImpl(SpatialPoolingOptions options_) : options(std::move(options_)) {
  const int64_t B = options.batch();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  active = register_buffer("active", torch::zeros({B, 64}, opts));
  n_active = register_buffer("n_active", torch::zeros({B}, opts));
  temporal = register_buffer("temporal", torch::zeros({B, 16, 64}, opts));
}

void SpatialPoolingImpl::update(const torch::Tensor& field) {
  const int64_t B = options.batch();
  const auto absF = field.abs();
  const auto cells = torch::adaptive_avg_pool3d(absF, {4, 4, 4});           // [B,64,4,4,4]
  const auto cm = cells.mean(1).view({B, 64});
  const auto thr = (absF.mean({1, 2, 3, 4}) * 0.8).clamp_min(0.01);
  active.copy_((cm > thr.unsqueeze(1)).to(torch::kFloat));
  n_active.copy_(active.sum(1));
  temporal.copy_(torch::adaptive_avg_pool3d(field.slice(1, 32, 48), {4, 4, 4}).view({B, 16, 64}));
}

}  // namespace fieldbrain
