#include "brain/sensory_imprint_fused.h"

#include <array>

#include "brain/ops/sensory_imprint.h"

namespace fieldbrain {

FusedSensoryImprintImpl::FusedSensoryImprintImpl(SensoryImprintOptions options_)
    : SensoryImprintState(std::move(options_)) {
  const int64_t B = options.batch(), S = options.sensory_dim(), R = options.resolution();
  const auto dev = options.device();
  for (const auto& t : ops::make_imprint_tables(S, R)) tables_.push_back(t.to(dev));
  const ops::ImprintScratchLayout layout{R * R * R, S, R};
  const auto f = torch::TensorOptions(torch::kFloat).device(dev);
  strength_ = register_scratch(torch::zeros({B}, f));
  work_ = register_scratch(torch::zeros({B, layout.floats()}, f));
  plane_argmax_ = register_scratch(torch::zeros({B, R}, torch::TensorOptions(torch::kInt).device(dev)));
}

torch::Tensor FusedSensoryImprintImpl::apply(const CycleContext& ctx, torch::Tensor& field,
                                             const ImprintDrive& drive, const torch::Tensor& noise_key) {
  launch(ctx, field, drive, noise_key);
  advance_host(ctx);
  return strength_;
}

void FusedSensoryImprintImpl::advance_host(const CycleContext& ctx) {
  map->advance(ctx.has_input);  // the kernel wrote slot count mod 100 where there was input
}

torch::Tensor FusedSensoryImprintImpl::launch(const CycleContext& ctx, torch::Tensor& field,
                                              const ImprintDrive& drive, const torch::Tensor& noise_key) {
  const std::array<at::Tensor, ops::kDriveTerms> terms{drive.conf, drive.has_ef, drive.boost,
                                                       drive.prev_imp, drive.prev_amp};
  ops::sensory_imprint_(field, occ, map->data, map_loc, strength_, work_, plane_argmax_,
                        ctx.sensors, ctx.facts, ctx.value_facts, terms, noise_key, tables_);
  return strength_;
}

}  // namespace fieldbrain
