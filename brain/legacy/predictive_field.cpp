#include "brain/legacy/predictive_field.h"

#include <algorithm>
#include <cmath>

#include "brain/legacy/exact_block_sums.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

PredictiveFieldSystem::PredictiveFieldSystem(std::vector<int64_t> field_shape, int64_t sensory_dim,
                                             at::Generator& gen)
    : sensory_dim_(sensory_dim),
      hierarchy_(HierarchicalPredictionOptions(std::move(field_shape), sensory_dim), gen) {}

// As the ATen expression rounds it: each tensor-scalar product with the scalar rounded to
// float, summed left to right, divided by the total weight as a float.
void add_combined_prediction(const HierarchicalPredictionResult& p, float* pred, int64_t n) {
  const auto& c = p.confidences;
  const double total_weight = c[0] + c[1] * 0.5 + c[2] * 0.25 + c[3] * 0.125;
  const float* p0 = p.predictions[0].data_ptr<float>();
  const auto f = [](double v) { return static_cast<float>(v); };
  const float k04 = f(0.4);
  if (total_weight < 0.01) {
    for (int64_t i = 0; i < n; ++i) pred[i] = pred[i] + p0[i] * k04;
    return;
  }
  const float* p1 = p.predictions[1].data_ptr<float>();
  const float* p2 = p.predictions[2].data_ptr<float>();
  const float* p3 = p.predictions[3].data_ptr<float>();
  const float c0 = f(c[0]), c1 = f(c[1]), c2 = f(c[2]), c3 = f(c[3]), tw = f(total_weight);
  const float h = f(0.5), q = f(0.25), e = f(0.125);
  for (int64_t i = 0; i < n; ++i) {
    const float combined = (((p0[i] * c0 + p1[i] * c1 * h) + p2[i] * c2 * q) + p3[i] * c3 * e) / tw;
    pred[i] = pred[i] + combined * k04;
  }
}

// The recent inputs as float32 rows, then the tensor ops' float32 arithmetic value by value.
bool add_momentum_prediction(const std::deque<std::vector<double>>& recent, float* pred, int64_t n) {
  const std::size_t first = recent.size() > 3 ? recent.size() - 3 : 0;
  for (std::size_t i = first; i < recent.size(); ++i)
    if (static_cast<int64_t>(recent[i].size()) != n) return false;
  const std::size_t last = recent.size() - 1;
  const auto f = [](double v) { return static_cast<float>(v); };
  const float k03 = f(0.3), k05 = f(0.5);
  for (int64_t i = 0; i < n; ++i) {
    const float r1 = f(recent[last][i]), r2 = f(recent[last - 1][i]);
    float momentum = r1 - r2;
    if (recent.size() - first == 3) momentum = momentum * k05 + (r2 - f(recent[last - 2][i])) * k03;
    pred[i] = pred[i] + (r1 + momentum) * k03;
  }
  return true;
}

// PredictiveFieldSystem.generate_sensory_prediction. Loops over the tensors' memory with the
// ATen ops' float32 roundings (the tensor-scalar ops' scalars rounded to float, in the
// expressions' order); the region's block means are exact_block_sums'.
SensoryPredictionResult PredictiveFieldSystem::generate(
    const torch::Tensor& field, const std::vector<TopologyRegion*>& regions,
    const std::deque<std::vector<double>>& recent_sensory) {
  SensoryPredictionResult out;
  torch::Tensor predictions = torch::zeros({sensory_dim_}, torch::kFloat32);
  float* pred = predictions.data_ptr<float>();
  out.temporal_basis = "immediate";
  // Phase 3: hierarchical predictions
  double field_activity = 0.0;  // mean(|field[..., :32]|), from the same walk
  last_hierarchical_ =
      hierarchy_->extract(HierarchicalPredictionImpl::channel_means(field, &field_activity));
  has_last_hierarchical_ = true;
  add_combined_prediction(last_hierarchical_, pred,
               std::min(sensory_dim_, last_hierarchical_.predictions[0].size(0)));
  const auto& c = last_hierarchical_.confidences;
  if (c[3] > 0.7)
    out.temporal_basis = "abstract";
  else if (c[2] > 0.6)
    out.temporal_basis = "long_term";
  else if (c[1] > 0.5)
    out.temporal_basis = "short_term";

  torch::Tensor temporal_field = field.index({"...", Slice(32, 48)});
  // momentum of the last <= 3 inputs (_compute_momentum_prediction)
  if (recent_sensory.size() >= 2 && !add_momentum_prediction(recent_sensory, pred, sensory_dim_))
    add_momentum_prediction_aten(recent_sensory, predictions);
  // topology regions' own predictions
  for (TopologyRegion* region : regions) {
    if (region == nullptr || !region->is_sensory_predictive) continue;
    torch::Tensor rp = region->predict_from_field(temporal_field);
    const float* r = rp.data_ptr<float>();
    const int64_t nr = rp.size(0);
    for (std::size_t i = 0; i < region->sensor_indices.size(); ++i) {
      const int64_t s = region->sensor_indices[i];
      if (s < sensory_dim_ && static_cast<int64_t>(i) < nr) {
        const double weight = region->prediction_confidence * region->stability;
        pred[s] = pred[s] + r[i] * static_cast<float>(weight);
      }
    }
  }
  // region_sensor_affinity is never filled: the contributor normalisation is a no-op.
  // predictions += tensor(activity) * 0.1, then clamp(-1, 1) (NaN stays NaN)
  const float activity = static_cast<float>(field_activity) * static_cast<float>(0.1);
  for (int64_t i = 0; i < sensory_dim_; ++i) {
    const float v = pred[i] + activity;
    pred[i] = std::isnan(v) ? v : std::min(std::max(v, -1.0f), 1.0f);
  }
  out.values = predictions;
  return out;
}

void add_momentum_prediction_aten(const std::deque<std::vector<double>>& recent_sensory,
                                  torch::Tensor& predictions) {
  std::vector<torch::Tensor> rows;
  for (std::size_t i = recent_sensory.size() > 3 ? recent_sensory.size() - 3 : 0;
       i < recent_sensory.size(); ++i) {
    const auto& s = recent_sensory[i];
    torch::Tensor t = torch::empty({static_cast<int64_t>(s.size())}, torch::kFloat32);
    float* p = t.data_ptr<float>();
    for (std::size_t k = 0; k < s.size(); ++k) p[k] = static_cast<float>(s[k]);
    rows.push_back(t);
  }
  torch::Tensor recent = torch::stack(rows);
  const int64_t n = recent.size(0);
  torch::Tensor momentum;
  if (n == 2)
    momentum = recent[-1] - recent[-2];
  else
    momentum = (recent[-1] - recent[-2]) * 0.5 + (recent[-2] - recent[-3]) * 0.3;
  torch::Tensor prediction = recent[-1] + momentum;
  predictions += prediction * 0.3;
}

// PredictiveFieldSystem.process_prediction_error
void PredictiveFieldSystem::process_prediction_error(const torch::Tensor& predicted,
                                                     const torch::Tensor& actual,
                                                     const std::vector<TopologyRegion*>& regions,
                                                     const torch::Tensor& field) {
  // torch.abs(actual - predicted).mean(), as one loop where the two are contiguous and alike
  double mean_error;
  if (actual.sizes() == predicted.sizes() && actual.dim() == 1 && actual.is_contiguous() &&
      predicted.is_contiguous()) {
    const int64_t n = actual.size(0);
    const float* a = actual.data_ptr<float>();
    const float* p = predicted.data_ptr<float>();
    diff_.resize(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) diff_[i] = a[i] - p[i];
    mean_error = exact_abs_mean(diff_.data(), n);
  } else {
    mean_error = torch::abs(actual - predicted).mean().item<double>();
  }
  error_history_.push_back(mean_error);
  if (error_history_.size() > 100) error_history_.pop_front();
  if (has_last_hierarchical_) {
    pending_ = hierarchy_->process_errors(last_hierarchical_, actual, field);
    has_pending_ = true;
  } else {
    pending_.clear();
    has_pending_ = false;
  }
  for (TopologyRegion* region : regions)
    if (region != nullptr && region->is_sensory_predictive)
      region->update_prediction_success(actual, predicted);
}

std::vector<FieldBlobWrite> PredictiveFieldSystem::take_pending_update() {
  std::vector<FieldBlobWrite> out;
  if (has_pending_) out.swap(pending_);
  pending_.clear();
  has_pending_ = false;
  return out;
}

void PredictiveFieldSystem::save(StateWriter& w, const std::string& part) const {
  hierarchy_->save(w, part + ".hierarchy");
  nlohmann::json j = {
      {"has_last_hierarchical", has_last_hierarchical_},
      {"error_history", std::vector<double>(error_history_.begin(), error_history_.end())}};
  if (has_last_hierarchical_) {
    j["last_confidences"] = last_hierarchical_.confidences;
    w.tensor(part + ".last_hierarchical",
             torch::stack({last_hierarchical_.predictions[0], last_hierarchical_.predictions[1],
                           last_hierarchical_.predictions[2], last_hierarchical_.predictions[3]}));
  }
  // The pending update is read within the cycle that makes it: never pending between cycles.
  w.state[part] = j;
}

void PredictiveFieldSystem::load(const StateReader& r, const std::string& part) {
  const auto& j = r.at(part);
  HierarchicalPredictionResult last;
  const bool has_last = j.at("has_last_hierarchical").get<bool>();
  if (has_last) {
    torch::Tensor p = r.tensor(part + ".last_hierarchical", torch::kFloat32, {4, sensory_dim_});
    for (int k = 0; k < 4; ++k) last.predictions[k] = p[k].clone();
    last.confidences = j.at("last_confidences").get<std::array<double, 4>>();
  }
  auto eh = j.at("error_history").get<std::vector<double>>();
  hierarchy_->load(r, part + ".hierarchy");
  has_last_hierarchical_ = has_last;
  last_hierarchical_ = last;
  error_history_.assign(eh.begin(), eh.end());
  pending_.clear();
  has_pending_ = false;
}

}  // namespace fieldbrain::legacy
