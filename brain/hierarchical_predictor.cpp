#include "brain/hierarchical_predictor.h"

#include <cmath>

#include "brain/cycle_facts.h"
#include "brain/ops/hierarchy_learn_math.h"
#include "brain/ops/philox.h"
#include "brain/sensor_sites.h"

namespace fieldbrain {
namespace {
constexpr double kGain[4] = {1.0, 0.5, 0.3, 0.2};
constexpr double kLearningRate[4] = {0.3, 0.1, 0.03, 0.01};
}  // namespace

HierarchicalPredictorState::HierarchicalPredictorState(HierarchicalPredictorOptions options_)
    : options(std::move(options_)) {
  const int64_t B = options.batch(), S = options.sensory_dim();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  W = register_buffer("W", torch::zeros({B, 4, 16, S}, opts));
  hpred = register_buffer("hpred", torch::zeros({B, 4, S}, opts));
  hist = register_module("hist", RingBuffer(RingBufferOptions(B, kHistCapacity, {S}).device(options.device())));
  for (int k = 0; k < 4; ++k) {
    herr[k] = register_module("herr" + std::to_string(k),
                              RingBuffer(RingBufferOptions(B, kHerrCapacity, {}).device(options.device())));
  }
}

HierarchicalPredictorImpl::HierarchicalPredictorImpl(HierarchicalPredictorOptions options_)
    : HierarchicalPredictorState(std::move(options_)) {}

void HierarchicalPredictorState::init_robot(int64_t b, uint64_t seed) {
  const int64_t S = options.sensory_dim();
  auto w = torch::empty({4, 16, S}, torch::kFloat);
  float* out = w.data_ptr<float>();
  for (int k = 0; k < 4; ++k) {
    const auto beta = static_cast<float>(kGain[k] * std::sqrt(6.0 / static_cast<double>(16 + S)));
    for (int64_t i = 0; i < 16 * S; ++i) {
      const int64_t index = k * 16 * S + i;
      const float u = philox::uniform(seed, 0, philox::kStreamHierarchy, static_cast<uint64_t>(index));
      out[index] = (u * 2.0f - 1.0f) * beta;  // 2u - 1 is exact; one rounding in the product
    }
  }
  W[b].copy_(w);
}

torch::Tensor HierarchicalPredictorImpl::observe(const CycleContext& ctx,
                                                 const torch::Tensor& field) {
  const int64_t B = options.batch(), S = options.sensory_dim(), R = options.resolution();
  const auto& a = ctx.sensors;
  hist->push(a);

  // Targets of the four timescales and which are active, per robot (host counts).
  const auto targets = torch::stack({a, hist->mean_last(10), hist->mean_last(100),
                                     hist->mean_last(1000)},
                                    1);  // [B,4,S]
  std::vector<float> active_host(B * 4, 0.0f);
  std::array<std::vector<bool>, 4> active_k;
  for (int k = 0; k < 4; ++k) active_k[k].assign(B, false);
  for (int64_t b = 0; b < B; ++b) {
    if (!ctx.scored[b]) continue;
    const int64_t h = hist->count(b);
    for (int k = 0; k < 4; ++k) {
      const bool on = timescale_active(ctx.cycle[b], h, k);
      active_k[k][b] = on;
      active_host[b * 4 + k] = on ? 1.0f : 0.0f;
    }
  }
  const auto active =
      torch::from_blob(active_host.data(), {B, 4}, torch::kFloat).clone().to(a.device());

  const auto e = targets - hpred;          // [B,4,S]
  const auto m = e.abs().mean(2);          // [B,4] mean |e_k|
  for (int k = 0; k < 4; ++k) herr[k]->push(m.select(1, k), active_k[k]);

  // W[k] += lr_k * outer(enc_k, e_k) for active timescales.
  const auto enc = torch::stack({field.slice(1, 0, 16).mean({2, 3, 4}), field.slice(1, 16, 32).mean({2, 3, 4}),
                                 field.slice(1, 32, 48).mean({2, 3, 4}), field.slice(1, 48, 64).mean({2, 3, 4})},
                                1);  // [B,4,16]
  const auto lr = torch::tensor({kLearningRate[0], kLearningRate[1], kLearningRate[2],
                                 kLearningRate[3]},
                                torch::kFloat)
                      .to(a.device());
  const auto outer = enc.unsqueeze(3) * e.unsqueeze(2);  // [B,4,16,S]
  W.add_(outer * lr.view({1, 4, 1, 1}) * active.view({B, 4, 1, 1}));

  // Pending update: t_k[i] * (0.5 + m_k) on cube(i, spread_k) in channel 16k + i.
  const auto write = active * (m > 0.01).to(torch::kFloat);  // [B,4]
  const auto spread = (m * 10).trunc().clamp(1, 3);            // [B,4]
  const int64_t n_sites = std::min<int64_t>(S, 16);
  auto value = torch::zeros({B, 4, 16}, a.options());
  value.slice(2, 0, n_sites)
      .copy_(targets.slice(2, 0, n_sites) * (m + 0.5).unsqueeze(2));
  value = value * write.unsqueeze(2);
  const auto mx = cube_axis_mask(spread, 0, R);  // [B,4,16,R]
  const auto my = cube_axis_mask(spread, 1, R);
  const auto mz = cube_axis_mask(spread, 2, R);
  // Products with the 0/1 axis masks are exact; only the last one is field-sized.
  const auto on_x = value.view({B, 4, 16, 1, 1, 1}) * mx.view({B, 4, 16, R, 1, 1});
  const auto on_xy = on_x * my.view({B, 4, 16, 1, R, 1});
  return (on_xy * mz.view({B, 4, 16, 1, 1, R})).view({B, 64, R, R, R});
}

void HierarchicalPredictorState::write_facts(int64_t b, int64_t* f) const {
  f[kFactHistCount] = hist->count(b);
  for (int64_t k = 0; k < 4; ++k) f[kFactHerrCount0 + k] = herr[k]->count(b);
}

void HierarchicalPredictorImpl::add_pending(torch::Tensor& field, const torch::Tensor& next,
                                            const torch::Tensor& pending_update) {
  at::add_out(field, next, pending_update);  // one pass
}

torch::Tensor HierarchicalPredictorState::predict(const torch::Tensor& field) {
  for (int64_t k = 0; k < 4; ++k) {
    const auto enc = field.slice(1, 16 * k, 16 * k + 16).mean({2, 3, 4}).unsqueeze(1);  // [B,1,16]
    hpred.select(1, k).copy_(torch::tanh(torch::matmul(enc, W.select(1, k)).squeeze(1)));
  }
  return timescale_confidence();
}

torch::Tensor HierarchicalPredictorState::predict_from_means(const torch::Tensor& channel_means) {
  for (int64_t k = 0; k < 4; ++k) {
    const auto enc = channel_means.slice(1, 16 * k, 16 * k + 16).unsqueeze(1);  // [B,1,16]
    hpred.select(1, k).copy_(torch::tanh(torch::matmul(enc, W.select(1, k)).squeeze(1)));
  }
  return timescale_confidence();
}

torch::Tensor HierarchicalPredictorState::timescale_confidence() {
  const int64_t B = options.batch();
  std::vector<torch::Tensor> cfs;
  for (int k = 0; k < 4; ++k) {
    const auto mu1 = herr[k]->mean_ages(0, 10);
    const auto mu2 = herr[k]->mean_ages(10, 20);
    std::vector<bool> few(B), boost(B);
    for (int64_t b = 0; b < B; ++b) {
      few[b] = herr[k]->count(b) < 5;
      boost[b] = herr[k]->count(b) > 20;
    }
    auto cf = 1 - (mu1 * 2).clamp_max(1.0);
    const auto boosted = (cf * 1.1).clamp_max(1.0);
    cf = torch::where((CycleContext::flags(boost, W.device()) > 0.5) & (mu1 < mu2), boosted, cf);
    cf = torch::where(CycleContext::flags(few, W.device()) > 0.5, torch::full_like(cf, 0.5), cf);
    cfs.push_back(cf);
  }
  return torch::stack(cfs, 1);
}

}  // namespace fieldbrain
