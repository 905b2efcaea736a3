// The fused cycle (BrainCycle::Fused: field_step "fast"): docs/cycle.md steps 1-11 through the
// fused operators of brain/FUSED.md, the same numbers as brain/cycle_reference.cpp within 1e-4.
// In two parts: the host's bookkeeping (attractor slots, ring counts, cycles without input),
// all of it before any launch; then device_cycle, which only launches operators that
// read this cycle's decisions from the fact tables: host-free, so on CUDA it is exactly what
// brain/cycle_graph.h records once and replays every later cycle. Every random number is made
// inside the operator that consumes it, and a steady cycle creates no tensor.
#include "brain/cycle_fused.h"

#include "brain/cycle_context.h"
#include "brain/field_brain_parts.h"
#include "brain/ops/field_readout.h"
#include "brain/stage_timer.h"

namespace fieldbrain {

FusedCycle::FusedCycle(FieldBrainImpl& brain) : Cycle(brain) {
  const BrainConfig& c = config();
  const int64_t B = batch(), S = c.sensory_dim, R = c.resolution;
  const auto dev = device();
  hierarchy_ = FusedHierarchicalPredictor(HierarchicalPredictorOptions(B, S, R).device(dev));
  error_field_ = FusedPredictionErrorField(PredictionErrorFieldOptions(B, S, R).device(dev));
  imprint_ = FusedSensoryImprint(SensoryImprintOptions(B, S, R).device(dev));
  modulation_ = FusedNoveltyModulation(NoveltyModulationOptions(B).device(dev));
  dynamics_ = FusedFieldDynamics(FieldDynamicsOptions(B, R).device(dev));
  prediction_ = FusedNextInputPrediction(NextInputPredictionOptions(B, S).device(dev));
  publish_variants(hierarchy_, error_field_, imprint_, modulation_, dynamics_, prediction_);

  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  readout_ = register_scratch(torch::zeros({B, ops::kReadoutWidth}, opts));
  const int64_t A = c.attractor_capacity;
  attractor_shadow_ = register_scratch(
      torch::zeros({B, A, 64, R, R, R}, torch::TensorOptions().dtype(torch::kShort).device(dev)));
  attractor_shadow_scale_ = register_scratch(torch::zeros({B, A, 64}, opts));
}

void FusedCycle::refresh_attractor_shadow() {
  RewardAttractorsImpl& attractors = *parts().attractors;
  const torch::Tensor& bank = attractors.bank;
  // The view's rows [first, first + B) of the bank's storage, which holds `rows` robots.
  const int64_t row_numel = bank.stride(0);
  const int64_t first = bank.storage_offset() / row_numel;
  const auto rows = static_cast<size_t>(
      static_cast<int64_t>(bank.storage().nbytes()) / (row_numel * bank.element_size()));
  // An inference tensor has no version counter: rebuilt every cycle then (never in fieldbrain).
  const int64_t version = bank.is_inference() ? -2 : static_cast<int64_t>(bank._version());
  const void* storage = bank.storage().data_ptr().get();
  if (version < 0 || version != bank_version_ || storage != bank_storage_ ||
      shadow_fresh_.size() != rows) {
    shadow_fresh_.assign(rows, 0);  // no allocation once sized
    bank_storage_ = storage;
  }
  for (int64_t b = 0; b < batch(); ++b) {
    uint8_t& fresh = shadow_fresh_[first + b];
    if (fresh) continue;
    attractors.rebuild_shadow(b, attractor_shadow_, attractor_shadow_scale_);
    fresh = 1;
  }
}

void FusedCycle::run(const CycleContext& ctx) {
  const int64_t B = batch();
  BrainParts& p = parts();
  // The shadow of the bank as it is now (before this cycle's plan retires or claims a slot).
  refresh_attractor_shadow();
  // Steps 6 and 7.9's slot bookkeeping (store, age, retire) for every robot, and the slot
  // table the attractor operators read.
  const int64_t A = p.attractors->options.capacity();
  float* weights = p.facts.attractor_weights_host.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    p.facts.row(b)[kFactAttractorSlot] = p.attractors->plan(b, ctx.reward[b], weights + b * A * 2);
  }
  // The fused parts' ring counts and cycles without input: their launches read this cycle's
  // counts from the tables filled before.
  for (BrainModule* m : modules()) m->advance_host(ctx);
  stages().mark("inputs");
  if (device().is_cuda()) {
    // The view's first row of the field's storage (a BrainGroup steps rows in place).
    const torch::Tensor& F = field();
    graph_.run(F.storage_offset() / F.stride(0), B, [&] { device_cycle(ctx); });
  } else {
    device_cycle(ctx);
  }
  // The bank as the pull left it: the view's shadow rows match it (refreshed above, then stored
  // to by the pull), and the others' as before, until someone else writes it.
  const torch::Tensor& bank = p.attractors->bank;
  bank_version_ = bank.is_inference() ? -2 : static_cast<int64_t>(bank._version());
}

void FusedCycle::device_cycle(const CycleContext& ctx) {
  BrainParts& p = parts();
  auto& F = field();
  const auto& key = noise_key();
  StageTimer& timer = stages();
  auto& mod = *modulation_;
  p.facts.upload();
  timer.mark("draws");  // none here: each operator makes its own from the noise key

  // 1-3: score the last prediction, the hierarchical errors (the fused hierarchy keeps its
  // weight update until 7.10), the error field.
  const auto e = prediction_->score(ctx, p.pooling->n_active);
  hierarchy_->launch_observe(ctx, F);
  error_field_->update(ctx, e);
  timer.mark("score+hierarchy");

  // 4: the sensory imprint (its empty-location noise made inside).
  const ImprintDrive drive{prediction_->conf, error_field_->has_ef, error_field_->boost,
                           mod.prev_imp, mod.prev_amp};
  const auto imprinted = imprint_->launch(ctx, F, drive, key);
  timer.mark("imprint");

  // 5-6: one read-out pass over F gives step 5's activity statistics; the modulation's launch
  // also fills the field step's scalars and makes 7.6 (step 6's store waits for the pull below).
  ops::field_readout_out(F, readout_);
  const int64_t first = ops::kReadoutSummary + ops::kSummaryActivityAbsMean;
  const auto activity_stats = readout_.slice(1, first, first + 2);
  mod.launch_update(ctx, F, prediction_->last_err, activity_stats, error_field_->has_ef,
                    error_field_->boost);
  timer.mark("modulation");

  // 7.1-7.8: the field step, its spontaneous noise made in the kernel.
  const auto& wave = dynamics_->compute_wave(ctx.phase);
  torch::Tensor next = dynamics_->step_seeded(F, key, wave, error_field_->ef, mod.step_scalars());
  timer.mark("field_step");

  // 6 and 7.9-7.10: the planned attractor store of F (untouched by the field step) and the
  // pull, in one operator (no pass of the store's own) that writes F = next + the pull (a copy
  // of next where no slot pulls), then F += the pending update.
  p.attractors->store_and_pull_planned(F, next, attractor_shadow_, attractor_shadow_scale_,
                                       p.facts.attractor_weights, F,
                                       ctx.facts.select(1, kFactAttractorSlot));
  hierarchy_->apply_pending(F);
  timer.mark("attractors");

  // 8-11: one read-out pass over F for every statistic, then one operator for pooling,
  // prediction, motors and their echo.
  ops::field_readout_out(F, readout_);
  prediction_->launch_predict_and_act(ctx, readout_, *hierarchy_, *p.pooling, *p.motors, *p.echo,
                                      mod.explore, key, F);
  timer.mark("pooling+prediction");
  timer.mark("motors");

  finish(imprinted);
}

}  // namespace fieldbrain
