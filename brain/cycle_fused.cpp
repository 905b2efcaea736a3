// The fused cycle (BrainCycle::Fused: field_step "fast"): docs/cycle.md steps 1-11 through the
// fused operators of brain/FUSED.md, the same numbers as brain/cycle_reference.cpp within 1e-4.
// In two parts: the host's bookkeeping (attractor slots, ring counts, cycles without input),
// all of it before any launch; then fused_device_cycle, which only launches operators that
// read this cycle's decisions from the fact tables: host-free, so on CUDA it is exactly what
// brain/cycle_graph.h records once and replays every later cycle. Every random number is made
// inside the operator that consumes it, and a steady cycle creates no tensor.
#include "brain/cycle_context.h"
#include "brain/field_brain.h"
#include "brain/field_brain_parts.h"
#include "brain/ops/field_readout.h"

namespace fieldbrain {

void FieldBrainImpl::allocate_fused_scratch() {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  parts_->readout = register_scratch(torch::zeros({batch(), ops::kReadoutWidth}, opts));
}

void FieldBrainImpl::fused_cycle(const CycleContext& ctx) {
  const int64_t B = batch();
  Parts& p = *parts_;
  // Steps 6 and 7.9's slot bookkeeping (store, age, retire) for every robot, and the slot
  // table the attractor operators read.
  const int64_t A = p.attractors->options.capacity();
  float* weights = p.facts.attractor_weights_host.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    p.facts.row(b)[kFactAttractorSlot] = p.attractors->plan(b, ctx.reward[b], weights + b * A * 2);
  }
  // The fused parts' ring counts and cycles without input: their launches read this cycle's
  // counts from the tables filled before.
  for (BrainModule* m : modules_) m->advance_host(ctx);
  stages_.mark("inputs");
  if (device_.is_cuda()) {
    graph_->run(B, [&] { fused_device_cycle(ctx); });
  } else {
    fused_device_cycle(ctx);
  }
}

void FieldBrainImpl::fused_device_cycle(const CycleContext& ctx) {
  Parts& p = *parts_;
  auto& F = field_;
  auto& mod = *p.modulation;
  p.facts.upload();
  stages_.mark("draws");  // none here: each operator makes its own from noise_key_

  // 1-3: score the last prediction, the hierarchical errors (the fused hierarchy keeps its
  // weight update until 7.10), the error field.
  const auto e = p.prediction->score(ctx, p.pooling->n_active);
  p.hierarchy->launch_observe(ctx, F);
  p.error_field->update(ctx, e);
  stages_.mark("score+hierarchy");

  // 4: the sensory imprint (its empty-location noise made inside).
  const ImprintDrive drive{p.prediction->conf, p.error_field->has_ef, p.error_field->boost,
                           mod.prev_imp, mod.prev_amp};
  const auto imprinted = p.imprint->launch_fused(ctx, F, drive, noise_key_);
  stages_.mark("imprint");

  // 5-6: one read-out pass over F gives step 5's activity statistics; the modulation's launch
  // also fills the field step's scalars and makes 7.6; the attractors store into the planned slot.
  ops::field_readout_out(F, p.readout);
  const int64_t first = ops::kReadoutSummary + ops::kSummaryActivityAbsMean;
  const auto activity_stats = p.readout.slice(1, first, first + 2);
  mod.launch_update(ctx, F, p.prediction->last_err, activity_stats, p.error_field->has_ef,
                    p.error_field->boost);
  p.attractors->record_planned(F, ctx.facts.select(1, kFactAttractorSlot));
  stages_.mark("modulation");

  // 7.1-7.8: the field step, its spontaneous noise made in the kernel.
  const auto& wave = p.dynamics->compute_wave(ctx.phase);
  torch::Tensor next = p.dynamics->step_seeded(F, noise_key_, wave, p.error_field->ef, mod.step_scalars());
  stages_.mark("field_step");

  // 7.9-7.10: the planned attractors' pull, then F = next + the pending hierarchical update.
  p.attractors->pull_planned(next, p.facts.attractor_weights);
  p.hierarchy->add_pending(F, next, torch::Tensor());
  stages_.mark("attractors");

  // 8-11: one read-out pass over F for every statistic, then one operator for pooling,
  // prediction, motors and their echo.
  ops::field_readout_out(F, p.readout);
  p.prediction->launch_predict_and_act(ctx, p.readout, *p.hierarchy, *p.pooling, *p.motors,
                                       *p.echo, mod.explore, noise_key_, F);
  stages_.mark("pooling+prediction");
  stages_.mark("motors");

  finish_device_cycle(imprinted);
}

}  // namespace fieldbrain
