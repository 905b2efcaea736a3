#include "brain/legacy/reward_shaping.h"

#include <cmath>

#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

// RewardTopologyShaper.process_reward
void RewardTopologyShaper::process_reward(const torch::Tensor& field, double reward) {
  if (std::abs(reward) < 0.1) return;
  const double valence = reward > 0 ? 1.0 : (reward < 0 ? -1.0 : 0.0);
  attractors_.push_back({field.clone(), std::abs(reward), valence, 0, torch::Tensor()});
  if (static_cast<int64_t>(attractors_.size()) > max_attractors_) attractors_.pop_front();
  reward_history_.push_back(reward);
  if (reward_history_.size() > 1000) reward_history_.pop_front();
}

namespace {
// F.cosine_similarity's norm of one flattened operand in torch 1.13:
// sqrt(clamp_min(sum(x^2), eps^2)) over the [1, N] row.
torch::Tensor cosine_norm(const torch::Tensor& flat_row) {
  const double eps = 1e-8;
  return flat_row.pow(2).sum(1, true).clamp_min(eps * eps).sqrt();
}
}  // namespace

// RewardTopologyShaper.apply_topology_influence (+ _compute_attractor_influence). The cosine
// similarity is torch's ((x1 / |x1|) * (x2 / |x2|)).sum(1) with the field's normalised row
// computed once per call and each pattern's norm once per attractor; the influence
// (P - F) * strength * valence * 0.01 * k is one pass with the original's roundings.
void RewardTopologyShaper::apply_influence(torch::Tensor& field) {
  if (attractors_.empty()) return;
  torch::Tensor total;
  torch::Tensor field_row = field.reshape({1, -1});
  torch::Tensor field_unit;  // x1 / |x1|, made when the first live attractor needs it
  torch::Tensor product;
  const int64_t N = field_row.size(1);
  for (auto& a : attractors_) {
    a.age += 1;
    const double strength = a.strength * python_pow(persistence_, static_cast<int>(a.age));
    if (strength < 0.001) continue;
    if (!field_unit.defined()) {
      field_unit = field_row / cosine_norm(field_row);
      product = torch::empty({1, N}, torch::kFloat32);
    }
    if (!a.norm.defined()) a.norm = cosine_norm(a.pattern.reshape({1, -1}));
    const float* pu = field_unit.data_ptr<float>();
    const float* pp = a.pattern.data_ptr<float>();
    const float pn = a.norm.item<float>();
    float* pr = product.data_ptr<float>();
    for (int64_t i = 0; i < N; ++i) pr[i] = pu[i] * (pp[i] / pn);
    const double similarity = product.sum(1).item<double>();
    const double k = a.valence > 0 ? (1 + similarity) / 2 : (1 - similarity) / 2;
    const auto fs = static_cast<float>(strength), fv = static_cast<float>(a.valence),
               fc = static_cast<float>(0.01), fk = static_cast<float>(k);
    const float* f = field_row.data_ptr<float>();
    if (!total.defined()) {
      total = torch::empty({N}, torch::kFloat32);
      float* t = total.data_ptr<float>();
      for (int64_t i = 0; i < N; ++i) t[i] = (((((pp[i] - f[i]) * fs) * fv) * fc) * fk);
    } else {
      float* t = total.data_ptr<float>();
      for (int64_t i = 0; i < N; ++i) t[i] = t[i] + (((((pp[i] - f[i]) * fs) * fv) * fc) * fk);
    }
  }
  std::deque<Attractor> alive;
  for (auto& a : attractors_)
    if (a.strength * python_pow(persistence_, static_cast<int>(a.age)) >= 0.001)
      alive.push_back(std::move(a));
  attractors_ = std::move(alive);
  if (total.defined()) {
    float* f = field.data_ptr<float>();
    const float* t = total.data_ptr<float>();
    for (int64_t i = 0; i < N; ++i) f[i] = f[i] + t[i];
  }
}

void RewardTopologyShaper::save(StateWriter& w, const std::string& part) const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < attractors_.size(); ++i) {
    const auto& a = attractors_[i];
    w.tensor(part + ".attractor" + std::to_string(i), a.pattern);
    list.push_back({{"strength", a.strength}, {"valence", a.valence}, {"age", a.age}});
  }
  w.state[part] = {
      {"attractors", list},
      {"reward_history", std::vector<double>(reward_history_.begin(), reward_history_.end())}};
}

void RewardTopologyShaper::load(const StateReader& r, const std::string& part) {
  const auto& j = r.at(part);
  std::deque<Attractor> attractors;
  std::size_t i = 0;
  for (const auto& ja : j.at("attractors")) {
    attractors.push_back({r.tensor(part + ".attractor" + std::to_string(i++)),
                          ja.at("strength").get<double>(), ja.at("valence").get<double>(),
                          ja.at("age").get<int64_t>(), torch::Tensor()});
  }
  auto rh = j.at("reward_history").get<std::vector<double>>();
  attractors_ = std::move(attractors);
  reward_history_.assign(rh.begin(), rh.end());
}

}  // namespace fieldbrain::legacy
