#include "brain/legacy/reward_shaping.h"

#include <torch/version.h>

#include <algorithm>
#include <cmath>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/field_loops.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

// RewardTopologyShaper.process_reward
void RewardTopologyShaper::process_reward(const torch::Tensor& field, double reward) {
  if (std::abs(reward) < 0.1) return;
  const double valence = reward > 0 ? 1.0 : (reward < 0 ? -1.0 : 0.0);
  attractors_.push_back({field.contiguous().clone(), std::abs(reward), valence, 0, -1.0f});
  if (static_cast<int64_t>(attractors_.size()) > max_attractors_) attractors_.pop_front();
  reward_history_.push_back(reward);
  if (reward_history_.size() > 1000) reward_history_.pop_front();
}

namespace {
constexpr int64_t kBlock = 4096;  // values per block of the walks (stack buffers, L1-sized)

// F.cosine_similarity's norm of one flattened operand ([1, n], dim 1), as the LibTorch release
// it runs on takes it (the original follows its torch, and so does the port): torch 1.13 takes
// sqrt(clamp_min(sum(x^2), eps^2)), the sum in ATen's order; torch 2.x takes
// clamp_min(linalg_vector_norm(x), eps), whose reduction rounds differently (checked against
// F.cosine_similarity under both: test/fixtures/legacy/README.md, "One set per torch release").
float cosine_norm(const float* x, int64_t n) {
#if TORCH_VERSION_MAJOR >= 2
  const at::Tensor row = at::from_blob(const_cast<float*>(x), {1, n}, at::kFloat);
  const float norm = at::linalg_vector_norm(row, 2, at::IntArrayRef{1}, true).item<float>();
  const auto eps = static_cast<float>(1e-8);
  return norm < eps ? eps : norm;
#else
  AtenRowSum sum(n);
  alignas(64) float block[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    squares(x + i0, m, block);
    sum.add(block, m);
  }
  const float s = sum.result();
  const auto eps2 = static_cast<float>(1e-8 * 1e-8);
  return std::sqrt(s < eps2 ? eps2 : s);
#endif
}
}  // namespace

// RewardTopologyShaper.apply_topology_influence (+ _compute_attractor_influence), as blocked
// walks: the first takes every live attractor's cosine similarity with the field
// (F.cosine_similarity: ((F / |F|) * (P / |P|)).sum(), each norm max(|x|, 1e-8), every sum in
// ATen's float32 order; each pattern's norm once per attractor), the second adds every influence
// (P - F) * strength * valence * 0.01 * k with the original's float32 roundings, summed over
// the attractors in their order as the original's `total +=` sums them, then to the field.
// Each pattern is read twice per cycle, where the ATen chain walked it ~7 times.
void RewardTopologyShaper::apply_influence(torch::Tensor& field) {
  if (attractors_.empty()) return;
  struct Live {
    const float* pattern;
    double strength, valence;
    Attractor* attractor;
  };
  std::vector<Live> live;
  for (auto& a : attractors_) {
    a.age += 1;
    const double strength = a.strength * python_pow(persistence_, static_cast<int>(a.age));
    if (strength >= 0.001) live.push_back({a.pattern.data_ptr<float>(), strength, a.valence, &a});
  }
  if (!live.empty()) {
    float* f = field.data_ptr<float>();
    const int64_t N = field.numel();
    const float field_norm = cosine_norm(f, N);
    for (const Live& l : live)
      if (l.attractor->norm < 0) l.attractor->norm = cosine_norm(l.pattern, N);
    // a block of the field's unit row stays in L1 across the patterns, each read as a stream
    similarity_sums_.assign(live.size(), AtenRowSum(N));
    alignas(64) float unit[kBlock], product[kBlock];
    for (int64_t i0 = 0; i0 < N; i0 += kBlock) {
      const int64_t n = std::min(kBlock, N - i0);
      divided(f + i0, field_norm, n, unit);
      for (std::size_t k = 0; k < live.size(); ++k) {
        unit_products(unit, live[k].pattern + i0, live[k].attractor->norm, n, product);
        similarity_sums_[k].add(product, n);
      }
    }
    std::vector<float> fs(live.size()), fv(live.size()), fk(live.size());
    for (std::size_t k = 0; k < live.size(); ++k) {
      const auto similarity = static_cast<double>(similarity_sums_[k].result());
      const double kk = live[k].valence > 0 ? (1 + similarity) / 2 : (1 - similarity) / 2;
      fs[k] = static_cast<float>(live[k].strength);
      fv[k] = static_cast<float>(live[k].valence);
      fk[k] = static_cast<float>(kk);
    }
    const auto fc = static_cast<float>(0.01);
    alignas(64) float total[kBlock];
    for (int64_t i0 = 0; i0 < N; i0 += kBlock) {
      const int64_t n = std::min(kBlock, N - i0);
      for (std::size_t a = 0; a < live.size(); ++a)
        attractor_term(total, live[a].pattern + i0, f + i0, n, fs[a], fv[a], fc, fk[a], a == 0);
      add_into(f + i0, total, n);
    }
  }
  std::deque<Attractor> alive;
  for (auto& a : attractors_)
    if (a.strength * python_pow(persistence_, static_cast<int>(a.age)) >= 0.001)
      alive.push_back(std::move(a));
  attractors_ = std::move(alive);
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
    attractors.push_back({r.tensor(part + ".attractor" + std::to_string(i++)).contiguous(),
                          ja.at("strength").get<double>(), ja.at("valence").get<double>(),
                          ja.at("age").get<int64_t>(), -1.0f});
  }
  auto rh = j.at("reward_history").get<std::vector<double>>();
  attractors_ = std::move(attractors);
  reward_history_.assign(rh.begin(), rh.end());
}

}  // namespace fieldbrain::legacy
