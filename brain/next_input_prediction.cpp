#include "brain/next_input_prediction.h"

#include <algorithm>

#include "brain/cycle_facts.h"

namespace fieldbrain {

NextInputPredictionState::NextInputPredictionState(NextInputPredictionOptions options_)
    : options(std::move(options_)) {
  const int64_t B = options.batch(), S = options.sensory_dim();
  const auto dev = options.device();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  recent = register_module("recent", RingBuffer(RingBufferOptions(B, kRecentCapacity, {S}).device(dev)));
  pred = register_buffer("pred", torch::zeros({B, S}, opts));
  pc = register_buffer("pc", torch::zeros({B, S}, opts));
  last_err = register_buffer("last_err", torch::zeros({B, S}, opts));
  conf = register_buffer("conf", torch::full({B}, 0.5, opts));
}

void NextInputPredictionState::write_facts(int64_t b, int64_t* f) const {
  f[kFactRecentCount] = recent->count(b);
}

NextInputPredictionImpl::NextInputPredictionImpl(NextInputPredictionOptions options_)
    : NextInputPredictionState(std::move(options_)) {
  const int64_t S = options.sensory_dim();
  const auto dev = options.device();
  cell_of_sensor_ = torch::arange(S, torch::kLong).remainder(64).to(dev);
  channel_of_sensor_ = torch::arange(S, torch::kLong).remainder(16).to(dev);
}

torch::Tensor NextInputPredictionImpl::score(const CycleContext& ctx, const torch::Tensor& n_active) {
  const int64_t B = options.batch();
  const auto dev = pred.device();
  // Host-known per-robot constants of the confidence update, in double as the cycle count is.
  std::vector<float> m(B), one_minus_m(B);
  std::vector<bool> early(B);
  for (int64_t b = 0; b < B; ++b) {
    const double n = static_cast<double>(ctx.cycle[b]);
    const double mm = 0.9 - std::min(0.2, n / 1000.0);
    m[b] = static_cast<float>(mm);
    one_minus_m[b] = static_cast<float>(1.0 - mm);
    early[b] = ctx.cycle[b] < 50;
  }
  const auto e = ctx.sensors - pred;
  const auto err = e.abs().mean(1);
  const auto mc = (n_active / 50).clamp_max(1.0);
  const auto w = 1.5 - mc * 0.5;
  const auto base = torch::where(CycleContext::flags(early, dev) > 0.5, (1 - mc) * 0.2,
                                 torch::zeros_like(mc));
  const auto raw = torch::maximum(base, 1 - (err * w).clamp_max(1.0));
  const auto next = CycleContext::values(m, dev) * conf + CycleContext::values(one_minus_m, dev) * raw;
  const auto scored = ctx.scored_f > 0.5;
  conf.copy_(torch::where(scored, next, torch::full_like(conf, 0.5)));
  last_err.copy_(torch::where(scored.unsqueeze(1), e, last_err));
  return e;
}

void NextInputPredictionImpl::predict(const CycleContext& ctx, const torch::Tensor& field,
                                      HierarchicalPredictorState& hierarchy,
                                      const SpatialPoolingImpl& pooling) {
  const auto cf = hierarchy.predict(field);
  predict_with(ctx, cf, field.slice(1, 0, 32).abs().mean({1, 2, 3, 4}), hierarchy, pooling);
}

void NextInputPredictionImpl::predict_with(const CycleContext& ctx, const torch::Tensor& cf,
                                           const torch::Tensor& content_abs_mean,
                                           const HierarchicalPredictorState& hierarchy,
                                           const SpatialPoolingImpl& pooling) {
  const int64_t B = options.batch(), S = options.sensory_dim();
  const auto dev = pred.device();
  recent->push(ctx.sensors);  // B4 fixed: extrapolate from this cycle's input too

  // Hierarchical readouts (cf [B,4]) weighted by their confidence, finer timescales first.
  const auto scale = torch::tensor({1.0, 0.5, 0.25, 0.125}, torch::kFloat).to(dev);
  const auto alpha = cf * scale;
  // Sums in timescale order (k = 0..3), one rounding per term.
  const auto total = ((alpha.select(1, 0) + alpha.select(1, 1)) + alpha.select(1, 2)) + alpha.select(1, 3);
  const auto hp = hierarchy.hpred;
  auto num = alpha.select(1, 0).unsqueeze(1) * hp.select(1, 0);
  for (int64_t k = 1; k < 4; ++k) num = num + alpha.select(1, k).unsqueeze(1) * hp.select(1, k);
  const auto weighted = num / total.unsqueeze(1);
  const auto comb = torch::where((total < 0.01).unsqueeze(1), hp.select(1, 0), weighted);
  auto p = comb * 0.4;
  auto c = (cf.amax(1) * 0.3).unsqueeze(1).expand({B, S});

  // Momentum of the last inputs (newest first).
  std::vector<int64_t> idx(B * 3, 0);
  std::vector<bool> three(B), two(B);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t n = recent->count(b);
    three[b] = n >= 3;
    two[b] = n == 2;
    for (int64_t age = 0; age < 3; ++age) {
      idx[b * 3 + age] = age < std::min<int64_t>(n, 3) ? recent->slot_of_age(b, age) : 0;
    }
  }
  const auto index = torch::from_blob(idx.data(), {B, 3, 1}, torch::kLong).clone().to(dev).expand({B, 3, S});
  const auto last = recent->data.gather(1, index);  // [B,3,S]: age 0, 1, 2
  const auto v3 = last.select(1, 0), v2 = last.select(1, 1), v1 = last.select(1, 2);
  const auto mom3 = v3 + (v3 - v2) * 0.5 + (v2 - v1) * 0.3;
  const auto mom2 = v3 + (v3 - v2);
  const auto three_f = CycleContext::flags(three, dev).unsqueeze(1);
  const auto two_f = CycleContext::flags(two, dev).unsqueeze(1);
  const auto any_f = three_f + two_f;
  const auto mom = torch::where(three_f > 0.5, mom3, torch::where(two_f > 0.5, mom2, torch::zeros_like(mom2)));
  p = torch::where(any_f > 0.5, p + mom * 0.3, p);
  c = torch::where(any_f > 0.5, c + 0.2, c);

  // Active pooled cells: sensor j reads cell j mod 64 of temporal channel 32 + j mod 16.
  const auto act = pooling.active.index_select(1, cell_of_sensor_);  // [B,S]
  const auto tm = pooling.temporal.view({B, 16 * 64})
                      .index_select(1, channel_of_sensor_ * 64 + cell_of_sensor_);
  p = p + act * 0.3 * tm;
  c = torch::maximum(c, act * 0.3);

  p = p + (content_abs_mean * 0.1).unsqueeze(1);
  pred.copy_(p.clamp(-1.0, 1.0));
  c = c.clamp(0.0, 1.0);
  pc.copy_(torch::where(c < 0.01, torch::full_like(c, 0.1), c));
}

}  // namespace fieldbrain
