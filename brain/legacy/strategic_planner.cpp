#include "brain/legacy/strategic_planner.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "brain/legacy/planner_evolution.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

namespace {

constexpr int64_t kHorizon = 100;         // simulation_horizon
constexpr std::size_t kMaxLibrary = 30;   // max_library_size

torch::Tensor channel_slice(const torch::Tensor& field, int64_t begin, int64_t end) {
  return field.slice(3, begin, end);  // field[:, :, :, begin:end]
}

// _extract_behavioral_tendency: tanh([dx * 2, dy * 2, dz * 0.5, pattern activation])
torch::Tensor behavioral_tendency(const torch::Tensor& field) {
  torch::Tensor activation = channel_slice(field, 0, 32).mean(-1);
  const int64_t R0 = activation.size(0), R1 = activation.size(1), R2 = activation.size(2);
  auto gradient = [&](int64_t dim, int64_t n) {
    return activation.slice(dim, 1, n).mean() - activation.slice(dim, 0, n - 1).mean();
  };
  const float zero = 0.0f;
  const float dx = R0 > 1 ? (gradient(0, R0) * 2.0).item<float>() : zero;
  const float dy = R1 > 1 ? (gradient(1, R1) * 2.0).item<float>() : zero;
  const float dz = R2 > 1 ? (gradient(2, R2) * 0.5).item<float>() : zero;
  const float pattern_activation = channel_slice(field, 32, 48).mean().item<float>();
  torch::Tensor behavior = torch::empty({4}, torch::kFloat32);
  float* b = behavior.data_ptr<float>();
  b[0] = dx;
  b[1] = dy;
  b[2] = dz;
  b[3] = pattern_activation;
  return at::tanh(behavior);
}

// _measure_behavioral_coherence
double behavioral_coherence(const std::vector<torch::Tensor>& trajectory) {
  if (trajectory.size() < 2) return 0.0;
  torch::Tensor t = at::stack(trajectory);
  const double smoothness = 1.0 / (1.0 + at::mean(at::abs(at::diff(t, 1, 0))).item<double>());
  torch::Tensor mean_direction = t.mean(0);
  const double consistency =
      at::mean(at::cosine_similarity(t, mean_direction.unsqueeze(0), 1)).item<double>();
  return (smoothness + consistency) / 2.0;
}

// _measure_pattern_persistence
double pattern_persistence(const torch::Tensor& pattern) {
  const double structure = pattern.std().item<double>();
  const double balance = 1.0 - at::abs(pattern.mean()).item<double>();
  return py_min(10.0 + structure * 20.0 + balance * 10.0, 50.0);
}

// _extract_context_embedding
torch::Tensor context_embedding(const torch::Tensor& field) {
  torch::Tensor content = channel_slice(field, 0, 32);
  torch::Tensor c = torch::empty({4}, torch::kFloat32);
  float* p = c.data_ptr<float>();
  p[0] = content.mean().item<float>();
  p[1] = content.std().item<float>();
  p[2] = content.abs().max().item<float>();
  p[3] = channel_slice(field, 48, field.size(3)).mean().item<float>();
  return c;
}

double cosine(const torch::Tensor& a, const torch::Tensor& b) {
  return at::cosine_similarity(a, b, 0).item<double>();
}

// _compute_behavioral_similarity (trajectories of one length: the horizon's)
double behavioral_similarity(const torch::Tensor& t1, const torch::Tensor& t2) {
  const double shape_sim = cosine(t1.flatten(), t2.flatten());
  const double direction_sim = cosine(t1[-1] - t1[0], t2[-1] - t2[0]);
  const double dynamics_sim =
      t1.size(0) > 2 ? cosine(at::diff(t1, 1, 0).flatten(), at::diff(t2, 1, 0).flatten())
                     : shape_sim;
  return 0.4 * shape_sim + 0.3 * direction_sim + 0.3 * dynamics_sim;
}

double positive_part(double x) { return x > 0 ? x : 0.0; }  // max(0, x)

}  // namespace

FieldTensions measure_field_tensions(const torch::Tensor& field) {
  FieldTensions t;
  const double content_energy = channel_slice(field, 0, 32).abs().mean().item<double>();
  t.information = py_max(0.0, 1.0 - content_energy * 2.0);
  const double learning = field.select(3, 55).mean().item<double>();
  t.learning = py_max(0.0, py_min(1.0, learning));
  const double confidence = field.select(3, 58).mean().item<double>();
  t.confidence = py_max(0.0, 1.0 - confidence);
  const double errors = channel_slice(field, 48, 52).abs().mean().item<double>();
  t.prediction = py_min(1.0, errors * 2.0);
  const double pattern_variance = channel_slice(field, 32, 48).std().item<double>();
  t.novelty = py_max(0.0, 1.0 - pattern_variance * 3.0);
  const double motor_variance = channel_slice(field, 62, 64).std().item<double>();
  t.monotony = py_max(0.0, 1.0 - motor_variance * 10.0);
  t.total = (t.information + t.learning + t.confidence + t.prediction + t.novelty + t.monotony) /
            6.0;
  return t;
}

StrategicPlanner::StrategicPlanner(int64_t resolution)
    : R_(resolution),
      diffusion_kernel_(planner_diffusion_kernel()),
      fused_step_(planner_fused_step_is_exact()) {}

// _evolve_field_with_pattern
torch::Tensor StrategicPlanner::evolve_with_pattern(const torch::Tensor& field,
                                                    const torch::Tensor& pattern,
                                                    at::Generator& gen) const {
  return fused_step_ ? planner_evolve_fused(field, pattern, diffusion_kernel_, gen)
                     : planner_evolve_aten(field, pattern, diffusion_kernel_, gen);
}

// _evaluate_pattern_tension_based
StrategicPlanner::Evaluation StrategicPlanner::evaluate(const torch::Tensor& base_field,
                                                        const torch::Tensor& pattern,
                                                        at::Generator& gen,
                                                        const std::atomic<bool>* stop) const {
  const FieldTensions initial = measure_field_tensions(base_field);
  torch::Tensor field = base_field.clone();
  channel_slice(field, 32, 48).copy_(pattern);
  std::vector<torch::Tensor> trajectory;
  trajectory.reserve(kHorizon);
  double cumulative_relief = 0.0;
  for (int64_t t = 0; t < kHorizon; ++t) {
    if (stop != nullptr && stop->load()) return {0.0, {}, {}, true};
    field = evolve_with_pattern(field, pattern, gen);
    trajectory.push_back(behavioral_tendency(field));
    const double relief = initial.total - measure_field_tensions(field).total;
    cumulative_relief += relief * python_pow(0.95, static_cast<int>(t));
  }
  const FieldTensions final_t = measure_field_tensions(field);
  double score = cumulative_relief * 10.0 +
                 positive_part(initial.information - final_t.information) * 3.0 +
                 positive_part(initial.learning - final_t.learning) * 3.0 +
                 positive_part(initial.confidence - final_t.confidence) * 2.0 +
                 positive_part(initial.prediction - final_t.prediction) * 2.0 +
                 positive_part(initial.monotony - final_t.monotony) * 4.0;
  torch::Tensor stacked = at::stack(trajectory);
  if (trajectory.size() > 1) score += behavioral_coherence(trajectory) * 5.0;
  if (final_t.total > initial.total) score *= 0.5;
  return {score, stacked.mean(0), stacked, false};
}

// _generate_from_library (the library is not empty here)
torch::Tensor StrategicPlanner::generate_from_library(const torch::Tensor& context,
                                                      double exploration, at::Generator& gen,
                                                      double now_s) {
  std::vector<double> resonances;
  for (const StrategicPattern& stored : library_) {
    const double context_resonance = cosine(context, stored.context);
    const double recency_boost = std::exp(-0.01 * (now_s - stored.creation_time) / 3600);
    const double familiarity = py_min(static_cast<double>(stored.usage_count) / 10, 1.0);
    resonances.push_back(context_resonance * 0.6 + stored.score * 0.3 * recency_boost +
                         familiarity * 0.1);
  }
  torch::Tensor base;
  if (exploration < 0.3) {  // exploitation: the best match (np.argmax: the first)
    const auto best = static_cast<std::size_t>(
        std::max_element(resonances.begin(), resonances.end()) - resonances.begin());
    base = library_[best].pattern.clone();
    library_[best].usage_count += 1;
  } else {  // exploration: the top three blended by softmax weights
    std::vector<double> e(resonances.size());
    for (std::size_t i = 0; i < e.size(); ++i) e[i] = std::exp(resonances[i] * 2);
    const double total = numpy_pairwise_sum(e.data(), static_cast<std::ptrdiff_t>(e.size()));
    std::vector<std::size_t> order(resonances.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return resonances[a] < resonances[b]; });
    base = torch::zeros_like(library_[0].pattern);
    for (std::size_t k = order.size() > 3 ? order.size() - 3 : 0; k < order.size(); ++k) {
      const std::size_t idx = order[k];
      base.add_(library_[idx].pattern * (e[idx] / total));
      library_[idx].usage_count += 1;
    }
  }
  if (exploration > 0) {
    torch::Tensor noise = at::randn(base.sizes(), gen, base.options()) * exploration * 0.2;
    base = at::tanh(base + noise);
  }
  return base;
}

// _add_to_library
void StrategicPlanner::add_to_library(const StrategicPattern& p, double now_s) {
  for (StrategicPattern& stored : library_) {
    if (behavioral_similarity(p.trajectory, stored.trajectory) <= 0.85) continue;
    if (p.score > stored.score * 1.2) {  // significantly better: replaces it
      stored.pattern = p.pattern;
      stored.score = p.score;
      stored.trajectory = p.trajectory;
      stored.context = p.context;
    } else if (p.score > stored.score * 0.8) {  // comparable: blended in
      const double w = p.score / (p.score + stored.score);
      stored.pattern = stored.pattern * (1 - w) + p.pattern * w;
      stored.score = py_max(stored.score, p.score);
      stored.usage_count += 1;
    }
    return;
  }
  library_.push_back(p);
  if (library_.size() > kMaxLibrary) {
    // recency-weighted performance, best first; sort(reverse=True) keeps ties in order
    auto value = [&](const StrategicPattern& s) {
      const double age = std::exp(-0.1 * (now_s - s.creation_time) / 3600);
      return s.score * age * (1.0 + 0.1 * static_cast<double>(s.usage_count));
    };
    std::vector<std::pair<double, StrategicPattern>> keyed;
    for (StrategicPattern& s : library_) keyed.emplace_back(value(s), std::move(s));
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    library_.clear();
    for (std::size_t i = 0; i < kMaxLibrary; ++i) library_.push_back(std::move(keyed[i].second));
  }
}

// discover_strategic_pattern
std::optional<StrategicPattern> StrategicPlanner::discover(const torch::Tensor& field,
                                                           at::Generator& gen, double now_s,
                                                           int n_candidates,
                                                           double exploration_level,
                                                           const std::atomic<bool>* stop) {
  std::optional<StrategicPattern> best;
  double best_score = -std::numeric_limits<double>::infinity();
  const torch::Tensor context = context_embedding(field);
  const FieldTensions tensions = measure_field_tensions(field);
  for (int i = 0; i < n_candidates; ++i) {
    torch::Tensor candidate =
        i < n_candidates / 2 && !library_.empty()
            ? generate_from_library(context, exploration_level, gen, now_s)
            : generate_tension_targeted_pattern(R_, tensions, gen);
    Evaluation e = evaluate(field, candidate, gen, stop);
    if (e.stopped) return std::nullopt;
    if (e.score > best_score) {
      best_score = e.score;
      best = StrategicPattern{candidate,    e.score, e.signature, e.trajectory,
                              pattern_persistence(candidate), context, now_s, 0};
    }
  }
  if (best && best->score > 0) add_to_library(*best, now_s);
  return best;
}

void save_patterns(StateWriter& w, const std::string& part,
                   const std::vector<StrategicPattern>& patterns) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const StrategicPattern& p = patterns[i];
    const std::string key = part + "." + std::to_string(i) + ".";
    w.tensor(key + "pattern", p.pattern);
    w.tensor(key + "signature", p.signature);
    w.tensor(key + "trajectory", p.trajectory);
    w.tensor(key + "context", p.context);
    rows.push_back({{"score", p.score},
                    {"persistence", p.persistence},
                    {"creation_time", p.creation_time},
                    {"usage_count", p.usage_count}});
  }
  w.state[part] = rows;
}

std::vector<StrategicPattern> load_patterns(const StateReader& r, const std::string& part) {
  std::vector<StrategicPattern> out;
  const nlohmann::json& rows = r.at(part);
  if (!rows.is_array()) throw std::runtime_error("legacy state: '" + part + "' is not a list");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string key = part + "." + std::to_string(i) + ".";
    StrategicPattern p;
    p.pattern = r.tensor(key + "pattern");
    p.signature = r.tensor(key + "signature");
    p.trajectory = r.tensor(key + "trajectory");
    p.context = r.tensor(key + "context");
    p.score = rows[i].at("score").get<double>();
    p.persistence = rows[i].at("persistence").get<double>();
    p.creation_time = rows[i].at("creation_time").get<double>();
    p.usage_count = rows[i].at("usage_count").get<int64_t>();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace fieldbrain::legacy
