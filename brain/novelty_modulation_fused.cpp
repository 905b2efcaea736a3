#include "brain/novelty_modulation_fused.h"

#include <stdexcept>

#include "brain/cycle_facts.h"
#include "brain/ops/novelty_modulation.h"

namespace fieldbrain {

FusedNoveltyModulationImpl::FusedNoveltyModulationImpl(NoveltyModulationOptions options_)
    : NoveltyModulationState(options_, options_.device()) {
  using namespace ops::modulation;
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  step_scalars_ = register_scratch(torch::zeros({options.batch(), kStepScalars}, opts));
  state_.resize(kStateCount);
  state_[kSi] = si;
  state_[kSc] = sc;
  state_[kPlateau] = plateau;
  state_[kSigma] = sigma;
  state_[kPrevImp] = prev_imp;
  state_[kPrevAmp] = prev_amp;
  state_[kNovelty] = novelty;
  state_[kDrive] = drive;
  state_[kExplore] = explore;
  state_[kAmp] = amp;
  state_[kImp] = imp;
  state_[kDecay] = decay;
  state_[kInfo] = info;
}

void FusedNoveltyModulationImpl::update(const CycleContext& ctx, const torch::Tensor& field,
                                        const torch::Tensor& last_err,
                                        const torch::Tensor& activity_stats,
                                        const torch::Tensor& has_ef, const torch::Tensor& boost) {
  if (!activity_stats.defined() || !has_ef.defined() || !boost.defined()) {
    throw std::invalid_argument(
        "NoveltyModulation::update (fused): activity_stats, has_ef and boost are required");
  }
  launch_update(ctx, field, last_err, activity_stats, has_ef, boost);
  advance_host(ctx);
}

void FusedNoveltyModulationImpl::launch_update(const CycleContext& ctx, const torch::Tensor& field,
                                               const torch::Tensor& last_err,
                                               const torch::Tensor& activity_stats,
                                               const torch::Tensor& has_ef, const torch::Tensor& boost) {
  // The kernel takes every per-robot decision from ctx.facts (the ring counts and the cycles
  // without input before this cycle); the host then makes the same count updates.
  ops::novelty_modulation_(field, last_err, activity_stats, ctx.facts, ctx.value_facts, has_ef,
                           boost, nov->data, nov_ts, perr->data, pimp->data, state_, step_scalars_);
}

void FusedNoveltyModulationImpl::advance_host(const CycleContext& ctx) {
  const int64_t B = options.batch();
  nov->advance();
  perr->advance();
  push_imp_.resize(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) push_imp_[b] = pimp_pushes(perr->count(b));
  pimp->advance(push_imp_);
  auto* w = cwi.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) w[b] = cycles_without_input_after(w[b], ctx.has_input[b]);
}

}  // namespace fieldbrain
