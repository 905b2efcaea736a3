#include "brain/prediction_error_field.h"

#include "brain/sensor_sites.h"

namespace fieldbrain {

PredictionErrorFieldState::PredictionErrorFieldState(PredictionErrorFieldOptions options_)
    : options(std::move(options_)) {
  const int64_t B = options.batch(), R = options.resolution();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  ef = register_buffer("ef", torch::zeros({B, R, R, R}, opts));
  has_ef = register_buffer("has_ef", torch::zeros({B}, opts));
  boost = register_buffer("boost", torch::ones({B}, opts));
}

PredictionErrorFieldImpl::PredictionErrorFieldImpl(PredictionErrorFieldOptions options_)
    : PredictionErrorFieldState(std::move(options_)) {}

void PredictionErrorFieldImpl::update(const CycleContext& ctx, const torch::Tensor& e) {
  const int64_t B = options.batch(), S = options.sensory_dim(), R = options.resolution();
  // Signed mean error per site: sensors j with j mod 16 = i, summed in order of j.
  const int64_t n_sites = std::min<int64_t>(S, 16);
  std::vector<torch::Tensor> means;
  for (int64_t i = 0; i < n_sites; ++i) {
    const auto js = torch::arange(i, S, 16, torch::TensorOptions(torch::kLong).device(e.device()));
    means.push_back(e.index_select(1, js).mean(1));
  }
  const auto avg = torch::stack(means, 1);  // [B,n_sites]

  const auto hi = (avg > 0.1).to(torch::kFloat);
  const auto up = hi * (avg * 2).clamp_max(1.0);                // [B,16]
  const auto down = (1 - hi) * ((1 - avg) * 0.1);               // [B,16]
  auto next = torch::zeros({B, R, R, R}, e.options());
  for (int64_t i = 0; i < n_sites; ++i) {
    auto c1 = cube_view(next, cube_bounds(i, 1, R));
    c1.add_(up.select(1, i).view({B, 1, 1, 1}));
    auto c2 = cube_view(next, cube_bounds(i, 2, R));
    c2.sub_(down.select(1, i).view({B, 1, 1, 1}));
  }
  next = next + (e.abs().mean(1) * 0.05).view({B, 1, 1, 1});
  const auto scored = ctx.scored_f > 0.5;
  const auto new_boost = (1 + next.abs().mean({1, 2, 3}) * 4).clamp_max(3.0);
  ef.copy_(torch::where(scored.view({B, 1, 1, 1}), next, ef));
  boost.copy_(torch::where(scored, new_boost, boost));
  has_ef.copy_(torch::where(scored, torch::ones_like(has_ef), has_ef));
}

}  // namespace fieldbrain
