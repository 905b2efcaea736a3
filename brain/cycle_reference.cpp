// The reference cycle (BrainCycle::Reference: field_step "reference", "script" or a .pt path):
// docs/cycle.md steps 1-11 as ATen ops, one-to-one with scripts/reference/fieldbrain_ref.py.
// The per-cycle draws are made up front into buffers; the field step is whichever
// implementation the config chose (FieldStepImpl: ATen, the built-in script or a file).
// The fast cycle (brain/cycle_fused.cpp) is tested against this one.
#include <algorithm>
#include <cmath>

#include "brain/cycle_context.h"
#include "brain/field_brain.h"
#include "brain/field_brain_parts.h"
#include "brain/ops/philox.h"
#include "brain/ops/field_step.h"

namespace fieldbrain {

void FieldBrainImpl::allocate_reference_scratch() {
  const int64_t B = batch(), M = config_.motor_dim, R = config_.resolution;
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  Parts& p = *parts_;
  p.eps_loc = register_scratch(torch::zeros({B, R, R, R}, opts));
  p.eps_sp = register_scratch(torch::zeros({B, 48, R, R, R}, opts));
  p.eps_m = register_scratch(torch::zeros({B, std::max<int64_t>(M - 4, 0)}, opts));
  p.eps_x = register_scratch(torch::zeros({B, M}, opts));
}

void FieldBrainImpl::reference_cycle(const CycleContext& ctx) {
  const int64_t B = batch(), M = config_.motor_dim;
  Parts& p = *parts_;
  auto& F = field_;
  auto& mod = *p.modulation;

  // Step 6's slot, for the fact table (the attractors decide it again on their own below).
  const int64_t A = p.attractors->options.capacity();
  const int64_t* written = p.attractors->written.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    p.facts.row(b)[kFactAttractorSlot] = std::fabs(ctx.reward[b]) > 0.1f ? written[b] % A : -1;
  }
  stages_.mark("inputs");
  p.facts.upload();

  // The cycle's draws from the robots' (seed, cycle) (docs/cycle.md "Randomness").
  ops::philox_normal_out(noise_key_, philox::kStreamEmptyLocation, p.eps_loc);
  ops::philox_normal_out(noise_key_, philox::kStreamSpontaneous, p.eps_sp);
  if (M > 4) ops::philox_normal_out(noise_key_, philox::kStreamExtraMotors, p.eps_m);
  ops::philox_normal_out(noise_key_, philox::kStreamExploration, p.eps_x);
  stages_.mark("draws");

  // 1-3: score the last prediction, the hierarchical errors (with the field at cycle start;
  // their weight update is held in `pending` until 7.10), the error field.
  const auto e = p.prediction->score(ctx, p.pooling->n_active);
  const torch::Tensor pending = p.hierarchy->observe(ctx, F);
  p.error_field->update(ctx, e);
  stages_.mark("score+hierarchy");

  // 4: the sensory imprint.
  const ImprintDrive drive{p.prediction->conf, p.error_field->has_ef, p.error_field->boost,
                           mod.prev_imp, mod.prev_amp};
  const auto imprinted = p.imprint->apply(ctx, F, drive, p.eps_loc, noise_key_);
  stages_.mark("imprint");

  // 5-6: novelty and modulation, then the reward attractors record.
  mod.update(ctx, F, p.prediction->last_err, torch::Tensor(), p.error_field->has_ef,
             p.error_field->boost);
  p.attractors->record(ctx, F);
  stages_.mark("modulation");

  // 7.1-7.8: the field step on (decay, drive, explore, sigma, has_ef, 0, 0, 0); 7.6 updates
  // sigma after it (the step sees the value before).
  const auto zero = torch::zeros_like(mod.decay);
  const auto scalars =
      torch::stack({mod.decay, mod.drive, mod.explore, mod.sigma, p.error_field->has_ef, zero, zero, zero}, 1);
  const auto& wave = p.dynamics->compute_wave(ctx.phase);
  auto next = p.dynamics->step(F, p.eps_sp, wave, p.error_field->ef, scalars);
  mod.update_sigma(ctx, p.error_field->has_ef, p.error_field->boost);
  stages_.mark("field_step");

  // 7.9-7.10: the attractors' pull, then F = next + the pending hierarchical update.
  p.attractors->influence(next);
  p.hierarchy->add_pending(F, next, pending);
  stages_.mark("attractors");

  // 8-9: pooling and the prediction of the next input.
  p.pooling->update(F);
  p.prediction->predict(ctx, F, *p.hierarchy, *p.pooling);
  stages_.mark("pooling+prediction");

  // 10-11: the motors and their echo into the field.
  p.echo->apply(F, p.motors->generate(F, mod.explore, p.eps_m, p.eps_x));
  stages_.mark("motors");

  finish_device_cycle(imprinted);
}

}  // namespace fieldbrain
