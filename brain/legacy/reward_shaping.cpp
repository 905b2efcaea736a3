#include "brain/legacy/reward_shaping.h"

#include <cmath>

#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

// RewardTopologyShaper.process_reward
void RewardTopologyShaper::process_reward(const torch::Tensor& field, double reward) {
  if (std::abs(reward) < 0.1) return;
  const double valence = reward > 0 ? 1.0 : (reward < 0 ? -1.0 : 0.0);
  attractors_.push_back({field.clone(), std::abs(reward), valence, 0});
  if (static_cast<int64_t>(attractors_.size()) > max_attractors_) attractors_.pop_front();
  reward_history_.push_back(reward);
  if (reward_history_.size() > 1000) reward_history_.pop_front();
}

// RewardTopologyShaper.apply_topology_influence (+ _compute_attractor_influence)
void RewardTopologyShaper::apply_influence(torch::Tensor& field) {
  if (attractors_.empty()) return;
  torch::Tensor total;
  for (auto& a : attractors_) {
    a.age += 1;
    const double strength = a.strength * python_pow(persistence_, static_cast<int>(a.age));
    if (strength < 0.001) continue;
    torch::Tensor influence = (a.pattern - field) * strength * a.valence * 0.01;
    const double similarity = torch::cosine_similarity(field.flatten().unsqueeze(0),
                                                       a.pattern.flatten().unsqueeze(0))
                                  .item<double>();
    if (a.valence > 0)
      influence *= (1 + similarity) / 2;
    else
      influence *= (1 - similarity) / 2;
    // total_influence = zeros; total += influence (0 + x == x exactly)
    if (total.defined())
      total += influence;
    else
      total = influence;
  }
  std::deque<Attractor> alive;
  for (auto& a : attractors_)
    if (a.strength * python_pow(persistence_, static_cast<int>(a.age)) >= 0.001)
      alive.push_back(std::move(a));
  attractors_ = std::move(alive);
  if (total.defined()) field += total;
}

void RewardTopologyShaper::save(StateWriter& w, const std::string& part) const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < attractors_.size(); ++i) {
    const auto& a = attractors_[i];
    w.tensor(part + ".attractor" + std::to_string(i), a.pattern);
    list.push_back({{"strength", a.strength}, {"valence", a.valence}, {"age", a.age}});
  }
  w.state[part] = {{"attractors", list},
                   {"reward_history", std::vector<double>(reward_history_.begin(), reward_history_.end())}};
}

void RewardTopologyShaper::load(const StateReader& r, const std::string& part) {
  const auto& j = r.at(part);
  std::deque<Attractor> attractors;
  std::size_t i = 0;
  for (const auto& ja : j.at("attractors")) {
    attractors.push_back({r.tensor(part + ".attractor" + std::to_string(i++)),
                          ja.at("strength").get<double>(), ja.at("valence").get<double>(),
                          ja.at("age").get<int64_t>()});
  }
  auto rh = j.at("reward_history").get<std::vector<double>>();
  attractors_ = std::move(attractors);
  reward_history_.assign(rh.begin(), rh.end());
}

}  // namespace fieldbrain::legacy
