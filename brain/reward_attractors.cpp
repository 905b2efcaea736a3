#include "brain/reward_attractors.h"

#include <cmath>

#include "brain/attractor_influence.h"
#include "brain/ops/attractor_math.h"
#include "brain/ops/attractor_pull.h"
#include "brain/portable_math.h"

namespace fieldbrain {

RewardAttractorsImpl::RewardAttractorsImpl(RewardAttractorsOptions options_)
    : options(std::move(options_)) {
  const int64_t B = options.batch(), A = options.capacity(), R = options.resolution();
  bank = register_buffer("bank", torch::zeros({B, A, 64, R, R, R},
                                              torch::TensorOptions(torch::kFloat).device(options.device())));
  strength = register_buffer("strength", torch::zeros({B, A}, torch::kDouble));
  valence = register_buffer("valence", torch::zeros({B, A}, torch::kDouble));
  age = register_buffer("age", torch::zeros({B, A}, torch::kLong));
  valid = register_buffer("valid", torch::zeros({B, A}, torch::kLong));
  written = register_buffer("written", torch::zeros({B}, torch::kLong));
  workspace = register_scratch(torch::zeros({B, ops::attractor_workspace_width(static_cast<int>(A))},
                                            torch::TensorOptions(torch::kDouble).device(options.device())));
  // Only live slots are state: a dead slot is overwritten whole before it is read again.
  register_live_slots("bank", "valid");
}

int64_t RewardAttractorsImpl::store(int64_t b, float r) {
  if (!(std::fabs(r) > 0.1f)) return -1;
  const int64_t A = options.capacity();
  int64_t& n = written.data_ptr<int64_t>()[b];
  const int64_t slot = n % A;
  strength.data_ptr<double>()[b * A + slot] = std::fabs(static_cast<double>(r));
  valence.data_ptr<double>()[b * A + slot] = r > 0 ? 1.0 : -1.0;
  age.data_ptr<int64_t>()[b * A + slot] = 0;
  valid.data_ptr<int64_t>()[b * A + slot] = 1;
  n += 1;
  return slot;
}

double RewardAttractorsImpl::age_slot(int64_t b, int64_t j) {
  const int64_t i = b * options.capacity() + j;
  int64_t* ok = valid.data_ptr<int64_t>() + i;
  if (!*ok) return 0.0;
  int64_t& ag = age.data_ptr<int64_t>()[i];
  ag += 1;
  const double s = strength.data_ptr<double>()[i] * std::pow(0.95, static_cast<double>(ag));
  if (s < 0.001) {
    *ok = 0;
    return 0.0;
  }
  return s;
}

int64_t RewardAttractorsImpl::plan(int64_t b, float r, float* weights) {
  const int64_t A = options.capacity();
  const int64_t stored = store(b, r);  // step 6
  const double* va = valence.data_ptr<double>() + b * A;
  for (int64_t j = 0; j < A; ++j) {  // step 7.9's ageing
    float* w = weights + j * ops::kAttractorWeightColumns;
    w[ops::kAttractorWeight] = static_cast<float>(age_slot(b, j) * va[j] * 0.01);
    w[ops::kAttractorValence] = static_cast<float>(va[j]);
  }
  return stored;
}

void RewardAttractorsImpl::store_and_pull_planned(torch::Tensor& field,
                                                  const torch::Tensor& next,
                                                  torch::Tensor& shadow,
                                                  torch::Tensor& shadow_scale,
                                                  const torch::Tensor& weights,
                                                  const torch::Tensor& source,
                                                  const torch::Tensor& slot) {
  ops::attractor_pull_(field, next, bank, shadow, shadow_scale, weights, workspace, source, slot);
}

// The shadow's rule (brain/ops/attractor_math.h) in ATen, operation for operation as the
// kernels compute it (each one IEEE rounding: the clamp, the maximum, one float division for
// the step and one for the factor, the product, round to nearest even), so a rebuilt slot has
// the bits a store gives (test/brain/attractor_shadow_test.cpp: a loaded brain, whose shadow
// is rebuilt, pulls exactly as the brain that stored its slots; test/ops holds the kernels'
// stores to the same rule).
void RewardAttractorsImpl::rebuild_shadow(int64_t b, torch::Tensor& shadow,
                                          torch::Tensor& shadow_scale) const {
  torch::NoGradGuard no_grad;
  const int64_t A = options.capacity();
  const int64_t* ok = valid.data_ptr<int64_t>();
  const float top = ops::kAttractorShadowMax, levels = ops::kAttractorShadowLevels;
  for (int64_t j = 0; j < A; ++j) {
    if (!ok[b * A + j]) continue;
    const torch::Tensor y = bank[b][j].nan_to_num(0.0, top, -top).clamp(-top, top);
    const torch::Tensor m = y.abs().amax({1, 2, 3});
    const torch::Tensor some = m > 0;
    const torch::Tensor zero = torch::zeros_like(m);
    const torch::Tensor inverse = torch::where(some, torch::full_like(m, levels).div(m), zero);
    shadow_scale[b][j].copy_(torch::where(some, m.div(levels), zero));
    shadow[b][j].copy_(
        y.mul(inverse.view({64, 1, 1, 1})).round().clamp(-levels, levels).to(torch::kShort));
  }
}

void RewardAttractorsImpl::record(const CycleContext& ctx, const torch::Tensor& field) {
  for (int64_t b = 0; b < options.batch(); ++b) {
    const int64_t slot = store(b, ctx.reward[b]);
    if (slot >= 0) bank[b][slot].copy_(field[b]);
  }
}

void RewardAttractorsImpl::influence(torch::Tensor& field) {
  const int64_t A = options.capacity();
  auto va = valence.accessor<double, 2>();
  if (field.is_cpu() && field.scalar_type() == torch::kFloat && field.is_contiguous() &&
      bank.is_cpu() && bank.is_contiguous()) {
    // On the CPU one walk over the field and its pulling slots (brain/attractor_influence.h):
    // bit for bit influence_aten, without its temporaries.
    const int64_t C = field.size(1), V = field[0].numel() / C;
    TORCH_CHECK(bank.numel() == options.batch() * A * C * V, "attractor bank and field disagree");
    std::vector<AttractorPull> pulls;
    for (int64_t b = 0; b < options.batch(); ++b) {
      pulls.clear();
      for (int64_t j = 0; j < A; ++j) {
        const double s = age_slot(b, j);  // 0: empty or just retired
        if (s == 0.0) continue;
        pulls.push_back({bank.data_ptr<float>() + (b * A + j) * C * V, s * va[b][j] * 0.01,
                         va[b][j] > 0});
      }
      attractor_influence(field.data_ptr<float>() + b * C * V, C, V, pulls);
    }
    return;
  }
  // On CUDA (or a field the walk does not take) the ATen expression the walk reproduces.
  influence_aten(field);
}

void RewardAttractorsImpl::influence_aten(torch::Tensor& field) {
  const int64_t A = options.capacity();
  auto va = valence.accessor<double, 2>();
  for (int64_t b = 0; b < options.batch(); ++b) {
    const auto F = field[b];
    torch::Tensor total, F64;  // the field in float64, made once for all of the robot's slots
    for (int64_t j = 0; j < A; ++j) {
      const double s = age_slot(b, j);  // 0: empty or just retired
      if (s == 0.0) continue;
      const auto P = bank[b][j];
      if (!F64.defined()) F64 = F.reshape({-1}).to(torch::kDouble);
      const auto cosv = portable::cosine_similarity(F64, P.reshape({-1}), 0, F.scalar_type());
      const auto gate = va[b][j] > 0 ? (1 + cosv) / 2 : (1 - cosv) / 2;
      const auto inf = (P - F) * (s * va[b][j] * 0.01) * gate;
      total = total.defined() ? total + inf : inf;
    }
    if (total.defined()) F.add_(total);
  }
}

int64_t RewardAttractorsImpl::live(int64_t b) const {
  return valid[b].sum().item<int64_t>();
}

}  // namespace fieldbrain
