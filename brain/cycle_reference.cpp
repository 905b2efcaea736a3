// The reference cycle (BrainCycle::Reference: field_step "reference", "script" or a .pt path):
// docs/cycle.md steps 1-11 as ATen ops, one-to-one with scripts/reference/fieldbrain_ref.py.
// The per-cycle draws are made up front into buffers; the field step is whichever
// implementation the config chose (FieldStepImpl: ATen, the built-in script or a file).
// The fused cycle (brain/cycle_fused.cpp) is tested against this one.
#include "brain/cycle_reference.h"

#include <algorithm>
#include <cmath>

#include "brain/cycle_context.h"
#include "brain/field_brain_parts.h"
#include "brain/ops/field_step.h"
#include "brain/ops/philox.h"
#include "brain/stage_timer.h"

namespace fieldbrain {

ReferenceCycle::ReferenceCycle(FieldBrainImpl& brain) : Cycle(brain) {
  const BrainConfig& c = config();
  const int64_t B = batch(), S = c.sensory_dim, M = c.motor_dim, R = c.resolution;
  const auto dev = device();
  hierarchy_ = HierarchicalPredictor(HierarchicalPredictorOptions(B, S, R).device(dev));
  error_field_ = PredictionErrorField(PredictionErrorFieldOptions(B, S, R).device(dev));
  imprint_ = SensoryImprint(SensoryImprintOptions(B, S, R).device(dev));
  modulation_ = NoveltyModulation(NoveltyModulationOptions(B).device(dev));
  dynamics_ = FieldDynamics(
      FieldDynamicsOptions(B, R).field_step(c.field_step_impl()).script_path(c.field_step).device(dev));
  prediction_ = NextInputPrediction(NextInputPredictionOptions(B, S).device(dev));
  publish_variants(hierarchy_, error_field_, imprint_, modulation_, dynamics_, prediction_);

  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  eps_loc_ = register_scratch(torch::zeros({B, R, R, R}, opts));
  eps_sp_ = register_scratch(torch::zeros({B, 48, R, R, R}, opts));
  eps_m_ = register_scratch(torch::zeros({B, std::max<int64_t>(M - 4, 0)}, opts));
  eps_x_ = register_scratch(torch::zeros({B, M}, opts));
}

void ReferenceCycle::run(const CycleContext& ctx) {
  const int64_t B = batch(), M = config().motor_dim;
  BrainParts& p = parts();
  auto& F = field();
  const auto& key = noise_key();
  StageTimer& timer = stages();
  auto& mod = *modulation_;

  // Step 6's slot, for the fact table (the attractors decide it again on their own below).
  const int64_t A = p.attractors->options.capacity();
  const int64_t* written = p.attractors->written.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    p.facts.row(b)[kFactAttractorSlot] = std::fabs(ctx.reward[b]) > 0.1f ? written[b] % A : -1;
  }
  timer.mark("inputs");
  p.facts.upload();

  // The cycle's draws from the robots' (seed, cycle) (docs/cycle.md "Randomness").
  ops::philox_normal_out(key, philox::kStreamEmptyLocation, eps_loc_);
  ops::philox_normal_out(key, philox::kStreamSpontaneous, eps_sp_);
  if (M > 4) ops::philox_normal_out(key, philox::kStreamExtraMotors, eps_m_);
  ops::philox_normal_out(key, philox::kStreamExploration, eps_x_);
  timer.mark("draws");

  // 1-3: score the last prediction, the hierarchical errors (with the field at cycle start;
  // their weight update is held in `pending` until 7.10), the error field.
  const auto e = prediction_->score(ctx, p.pooling->n_active);
  const torch::Tensor pending = hierarchy_->observe(ctx, F);
  error_field_->update(ctx, e);
  timer.mark("score+hierarchy");

  // 4: the sensory imprint.
  const ImprintDrive drive{prediction_->conf, error_field_->has_ef, error_field_->boost,
                           mod.prev_imp, mod.prev_amp};
  const auto imprinted = imprint_->apply(ctx, F, drive, eps_loc_);
  timer.mark("imprint");

  // 5-6: novelty and modulation, then the reward attractors record.
  mod.update(ctx, F, prediction_->last_err);
  p.attractors->record(ctx, F);
  timer.mark("modulation");

  // 7.1-7.8: the field step on (decay, drive, explore, sigma, has_ef, 0, 0, 0); 7.6 updates
  // sigma after it (the step sees the value before).
  const auto zero = torch::zeros_like(mod.decay);
  const auto scalars =
      torch::stack({mod.decay, mod.drive, mod.explore, mod.sigma, error_field_->has_ef, zero, zero, zero}, 1);
  const auto& wave = dynamics_->compute_wave(ctx.phase);
  auto next = dynamics_->step(F, eps_sp_, wave, error_field_->ef, scalars);
  mod.update_sigma(ctx, error_field_->has_ef, error_field_->boost);
  timer.mark("field_step");

  // 7.9-7.10: the attractors' pull, then F = next + the pending hierarchical update.
  p.attractors->influence(next);
  hierarchy_->add_pending(F, next, pending);
  timer.mark("attractors");

  // 8-9: pooling and the prediction of the next input.
  p.pooling->update(F);
  prediction_->predict(ctx, F, *hierarchy_, *p.pooling);
  timer.mark("pooling+prediction");

  // 10-11: the motors and their echo into the field.
  p.echo->apply(F, p.motors->generate(F, mod.explore, eps_m_, eps_x_));
  timer.mark("motors");

  finish(imprinted);
}

}  // namespace fieldbrain
