#include "brain/legacy/predictive_field.h"

#include <algorithm>

namespace fieldbrain::legacy {

using torch::indexing::Slice;

PredictiveFieldSystem::PredictiveFieldSystem(std::vector<int64_t> field_shape, int64_t sensory_dim,
                                             at::Generator& gen)
    : sensory_dim_(sensory_dim),
      hierarchy_(HierarchicalPredictionOptions(std::move(field_shape), sensory_dim), gen) {}

// PredictiveFieldSystem.generate_sensory_prediction
SensoryPredictionResult PredictiveFieldSystem::generate(
    const torch::Tensor& field, const std::vector<TopologyRegion*>& regions,
    const std::deque<std::vector<double>>& recent_sensory) {
  SensoryPredictionResult out;
  torch::Tensor predictions = torch::zeros({sensory_dim_}, torch::kFloat32);
  out.temporal_basis = "immediate";
  // Phase 3: hierarchical predictions
  double field_activity = 0.0;  // mean(|field[..., :32]|), from the same walk
  last_hierarchical_ =
      hierarchy_->extract(HierarchicalPredictionImpl::channel_means(field, &field_activity));
  has_last_hierarchical_ = true;
  torch::Tensor combined = HierarchicalPredictionImpl::combine(last_hierarchical_);
  const int64_t min_dim = std::min(predictions.size(0), combined.size(0));
  predictions.index({Slice(0, min_dim)}) += combined.index({Slice(0, min_dim)}) * 0.4;
  const auto& c = last_hierarchical_.confidences;
  if (c[3] > 0.7)
    out.temporal_basis = "abstract";
  else if (c[2] > 0.6)
    out.temporal_basis = "long_term";
  else if (c[1] > 0.5)
    out.temporal_basis = "short_term";

  torch::Tensor temporal_field = field.index({"...", Slice(32, 48)});
  // momentum of the last <= 3 inputs (_compute_momentum_prediction)
  if (recent_sensory.size() >= 2) {
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
  // topology regions' own predictions
  float* pred = predictions.data_ptr<float>();
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
  predictions += torch::tensor(static_cast<float>(field_activity)) * 0.1;
  out.values = torch::clamp(predictions, -1.0, 1.0);
  return out;
}

// PredictiveFieldSystem.process_prediction_error
void PredictiveFieldSystem::process_prediction_error(const torch::Tensor& predicted,
                                                     const torch::Tensor& actual,
                                                     const std::vector<TopologyRegion*>& regions,
                                                     const torch::Tensor& field) {
  torch::Tensor abs_errors = torch::abs(actual - predicted);
  error_history_.push_back(abs_errors.mean().item<double>());
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
