#include "brain/reward_attractors.h"

#include <cmath>

#include "brain/ops/attractor_math.h"
#include "brain/ops/attractor_pull.h"

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
  workspace = torch::zeros({B, ops::attractor_workspace_width(static_cast<int>(A))},
                           torch::TensorOptions(torch::kDouble).device(options.device()));
}

int64_t RewardAttractorsImpl::plan(int64_t b, float r, float* weights) {
  const int64_t A = options.capacity();
  auto* st = strength.data_ptr<double>() + b * A;
  auto* va = valence.data_ptr<double>() + b * A;
  auto* ag = age.data_ptr<int64_t>() + b * A;
  auto* ok = valid.data_ptr<int64_t>() + b * A;
  int64_t stored = -1;
  if (std::fabs(r) > 0.1f) {  // step 6, as record() does it
    int64_t& n = written.data_ptr<int64_t>()[b];
    stored = n % A;
    st[stored] = std::fabs(static_cast<double>(r));
    va[stored] = r > 0 ? 1.0 : -1.0;
    ag[stored] = 0;
    ok[stored] = 1;
    n += 1;
  }
  for (int64_t j = 0; j < A; ++j) {  // step 7.9's ageing, as influence() does it
    float* w = weights + j * ops::kAttractorWeightColumns;
    w[ops::kAttractorWeight] = 0.0f;
    w[ops::kAttractorValence] = static_cast<float>(va[j]);
    if (!ok[j]) continue;
    ag[j] += 1;
    const double s = st[j] * std::pow(0.95, static_cast<double>(ag[j]));
    if (s < 0.001) {
      ok[j] = 0;
      continue;
    }
    w[ops::kAttractorWeight] = static_cast<float>(s * va[j] * 0.01);
  }
  return stored;
}

void RewardAttractorsImpl::record_planned(const torch::Tensor& field, const torch::Tensor& slot) {
  ops::attractor_record_(bank, field, slot);
}

void RewardAttractorsImpl::pull_planned(torch::Tensor& field, const torch::Tensor& weights) {
  ops::attractor_pull_(field, bank, weights, workspace);
}

void RewardAttractorsImpl::record(const CycleContext& ctx, const torch::Tensor& field) {
  const int64_t A = options.capacity();
  auto st = strength.accessor<double, 2>();
  auto va = valence.accessor<double, 2>();
  auto ag = age.accessor<int64_t, 2>();
  auto ok = valid.accessor<int64_t, 2>();
  auto* n = written.data_ptr<int64_t>();
  for (int64_t b = 0; b < options.batch(); ++b) {
    const float r = ctx.reward[b];
    if (!(std::fabs(r) > 0.1f)) continue;
    const int64_t slot = n[b] % A;
    bank[b][slot].copy_(field[b]);
    st[b][slot] = std::fabs(static_cast<double>(r));
    va[b][slot] = r > 0 ? 1.0 : -1.0;
    ag[b][slot] = 0;
    ok[b][slot] = 1;
    n[b] += 1;
  }
}

void RewardAttractorsImpl::influence(torch::Tensor& field) {
  const int64_t A = options.capacity();
  auto st = strength.accessor<double, 2>();
  auto va = valence.accessor<double, 2>();
  auto ag = age.accessor<int64_t, 2>();
  auto ok = valid.accessor<int64_t, 2>();
  for (int64_t b = 0; b < options.batch(); ++b) {
    const auto F = field[b];
    torch::Tensor total;
    for (int64_t j = 0; j < A; ++j) {
      if (!ok[b][j]) continue;
      ag[b][j] += 1;
      const double s = st[b][j] * std::pow(0.95, static_cast<double>(ag[b][j]));
      if (s < 0.001) {
        ok[b][j] = 0;
        continue;
      }
      const auto P = bank[b][j];
      const auto cosv = torch::cosine_similarity(F.reshape({-1}), P.reshape({-1}), 0, 1e-8);
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
