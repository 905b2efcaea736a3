#include "brain/legacy/topology_regions.h"

#include <algorithm>
#include <cmath>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/exact_block_sums.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

// TopologyRegion.update_activation
void TopologyRegion::update_activation(double strength, const std::vector<double>& motor,
                                       double now_s) {
  last_activation = now_s;
  activation_count += 1;
  total_strength += strength;
  importance *= 1.1;
  if (motor.size() >= 2) {
    const double forward_mag = std::abs(motor[0]);
    const double turn_mag = std::abs(motor[1]);
    std::string action;
    if (forward_mag > turn_mag * 1.5)
      action = motor[0] > 0 ? "forward" : "backward";
    else if (turn_mag > forward_mag * 1.5)
      action = motor[1] > 0 ? "turn_right" : "turn_left";
    else
      action = "mixed";
    motor_sequence.push_back(action);
    if (motor_sequence.size() > 20) motor_sequence.pop_front();
    if (motor_sequence.size() >= 10) {
      // dict counts in first-seen order; max() of the values
      std::vector<std::pair<std::string, int64_t>> counts;
      for (const auto& a : motor_sequence) {
        auto it =
            std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == a; });
        if (it == counts.end())
          counts.emplace_back(a, 1);
        else
          it->second += 1;
      }
      int64_t max_count = 0;
      for (const auto& p : counts) max_count = std::max(max_count, p.second);
      behavioral_monotony =
          static_cast<double>(max_count) / static_cast<double>(motor_sequence.size());
      if (behavioral_monotony > 0.7) importance *= 0.9;
    }
  }
}

// TopologyRegion.predict_from_field. The local block's channel means are exact_block_sums' loops
// over the field's memory (torch.mean's floats, no tensor asked for); the predictions tensor is
// also the new momentum (prediction_momentum = predictions.clone(): nobody writes either after).
torch::Tensor TopologyRegion::predict_from_field(const torch::Tensor& temporal_field) {
  const int64_t n = static_cast<int64_t>(sensor_indices.size());
  if (!is_sensory_predictive || n == 0) return torch::zeros({n}, torch::kFloat32);
  const int64_t x = center[0], y = center[1], z = center[2];
  const int64_t features = temporal_field.size(-1);
  TORCH_CHECK(temporal_field.dim() == 4 && temporal_field.stride(3) == 1 && features <= 64,
              "predict_from_field: a [R, R, R, <= 64] view with contiguous channels");
  const int64_t x0 = std::max<int64_t>(0, x - 2), x1 = std::min(temporal_field.size(0), x + 3);
  const int64_t y0 = std::max<int64_t>(0, y - 2), y1 = std::min(temporal_field.size(1), y + 3);
  const int64_t z0 = std::max<int64_t>(0, z - 2), z1 = std::min(temporal_field.size(2), z + 3);
  FieldBlock local;
  local.data = temporal_field.data_ptr<float>() + x0 * temporal_field.stride(0) +
               y0 * temporal_field.stride(1) + z0 * temporal_field.stride(2);
  local.sizes = {x1 - x0, y1 - y0, z1 - z0};
  local.strides = {temporal_field.stride(0), temporal_field.stride(1), temporal_field.stride(2)};
  local.channels = features;
  float tm[64];
  exact_block_channel_means(local, tm);
  torch::Tensor predictions = torch::empty({n}, torch::kFloat32);
  float* p = predictions.data_ptr<float>();
  const float* mom =
      prediction_momentum.defined() ? prediction_momentum.data_ptr<float>() : nullptr;
  const int64_t mom_n = prediction_momentum.defined() ? prediction_momentum.size(0) : 0;
  for (int64_t i = 0; i < n; ++i) {
    float v = tm[sensor_indices[i] % features];
    // 0.7 * prediction_val + 0.3 * momentum[i]: two float32 scalar products and a float32 sum
    if (mom != nullptr && i < mom_n) v = v * 0.7f + mom[i] * 0.3f;
    p[i] = v;
  }
  prediction_momentum = predictions;
  return predictions;
}

// TopologyRegion.update_prediction_success, with the region's slice of the combined
// prediction built as PredictiveFieldSystem.process_prediction_error builds it.
void TopologyRegion::update_prediction_success(const torch::Tensor& actual,
                                               const torch::Tensor& predicted) {
  if (sensor_indices.empty()) return;
  const float* a = actual.data_ptr<float>();
  const float* pr = predicted.data_ptr<float>();
  const int64_t na = actual.size(0), np_ = predicted.size(0);
  std::vector<double> errors;
  for (int64_t s : sensor_indices) {
    const float region_prediction = s < np_ ? pr[s] : 0.0f;
    if (s < na) errors.push_back(static_cast<double>(std::abs(a[s] - region_prediction)));
  }
  if (!errors.empty()) {
    const double avg_error = numpy_mean(errors);
    prediction_confidence = 0.9 * prediction_confidence + 0.1 * (1.0 - py_min(1.0, avg_error));
    prediction_history.push_back(avg_error);
    if (prediction_history.size() > 50) prediction_history.pop_front();
  }
}

TopologyRegionSystem::TopologyRegionSystem(std::vector<int64_t> field_shape,
                                           double stability_threshold, int64_t max_regions)
    : field_shape_(std::move(field_shape)),
      stability_threshold_(stability_threshold),
      max_regions_(max_regions) {}

TopologyRegion* TopologyRegionSystem::find(const std::string& id) {
  for (auto& r : regions_)
    if (r.id == id) return &r;
  return nullptr;
}

// TopologyRegionSystem._extract_pattern
torch::Tensor TopologyRegionSystem::extract_pattern(const torch::Tensor& field,
                                                    const std::array<int64_t, 3>& c,
                                                    int64_t feature_center) const {
  // field[x-2:x+3, y-2:y+3, z-2:z+3, feature_center] / (torch.norm(it) + 1e-8), one tensor asked
  // for (exact_block_sums: ATen's floats, probed)
  const int64_t h = 2;
  FieldBlock block;
  std::array<int64_t, 3> lo{};
  for (int k = 0; k < 3; ++k) {
    lo[k] = std::max<int64_t>(0, c[k] - h);
    block.sizes[k] = std::min(field_shape_[k], c[k] + h + 1) - lo[k];
    block.strides[k] = field.stride(k);
  }
  TORCH_CHECK(field.stride(3) == 1, "extract_pattern: a field with contiguous channels");
  block.data = field.data_ptr<float>() + lo[0] * field.stride(0) + lo[1] * field.stride(1) +
               lo[2] * field.stride(2);
  block.channels = field.size(3);
  torch::Tensor pattern =
      torch::empty({block.sizes[0], block.sizes[1], block.sizes[2]}, torch::kFloat32);
  exact_normalised_channel(block, feature_center, pattern.data_ptr<float>());
  return pattern;
}

// _find_salient_regions' candidate points: the voxels whose mean |value| over the channels
// passes max(0.01, 0.8 * mean |field|), in order (the first 10), or else the 5 largest means.
// One walk over the field in blocks of rows: the |values| of a block feed both torch.mean(|F|)'s
// one-row sum and each row's own sum, in ATen's orders (aten_sums.h); the comparison with the
// threshold is float32 against the threshold rounded to float, as torch's `>` takes it.
std::vector<std::array<int64_t, 3>> TopologyRegionSystem::salient_points(const torch::Tensor& field) {
  const int64_t C = field.size(3), V = field.numel() / C;
  const float* f = field.data_ptr<float>();
  voxel_means_.resize(static_cast<std::size_t>(V));
  AtenRowSum total(V * C);
  constexpr int64_t kRows = 64;
  std::vector<float>& block = abs_block_;
  block.resize(static_cast<std::size_t>(kRows * C));
  for (int64_t v0 = 0; v0 < V; v0 += kRows) {
    const int64_t rows = std::min(kRows, V - v0);
    const float* src = f + v0 * C;
    for (int64_t i = 0; i < rows * C; ++i) block[i] = std::fabs(src[i]);
    total.add(block.data(), rows * C);
    aten_row_sums(block.data(), rows, C, C, voxel_means_.data() + v0);
  }
  const auto Cf = static_cast<float>(C);
  for (float& m : voxel_means_) m = m / Cf;
  const float mean_abs = total.result() / static_cast<float>(V * C);
  // std_activation and max_activation are computed and never read: not computed.
  const double salience_threshold = py_max(0.01, static_cast<double>(mean_abs) * 0.8);
  const auto threshold = static_cast<float>(salience_threshold);
  const int64_t s1 = field.size(1), s2 = field.size(2);
  std::vector<std::array<int64_t, 3>> points;
  for (int64_t v = 0; v < V && points.size() < 10; ++v)
    if (voxel_means_[v] > threshold) points.push_back({v / (s1 * s2), (v / s2) % s1, v % s2});
  if (!points.empty()) return points;
  // none above: torch.topk(field_mean.flatten(), 5)'s indices, as topk orders them
  const torch::Tensor flat =
      torch::from_blob(voxel_means_.data(), {V}, torch::kFloat32).clone();
  const int64_t k = std::min<int64_t>(5, V);
  const torch::Tensor idx = std::get<1>(torch::topk(flat, k));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t v = idx[i].item<int64_t>();
    points.push_back({v / (s1 * s2), (v / s2) % s1, v % s2});
  }
  return points;
}

// TopologyRegionSystem._find_salient_regions (+ _compute_coherence)
std::vector<TopologyRegionSystem::Salient> TopologyRegionSystem::find_salient_regions(
    const torch::Tensor& field) {
  TORCH_CHECK(field.dim() == 4 && field.stride(3) == 1 && field.scalar_type() == torch::kFloat32,
              "find_salient_regions: a float [R, R, R, C] field with contiguous channels");
  std::vector<Salient> out;
  std::vector<std::array<int64_t, 3>> points = salient_points(field.contiguous());
  if (points.size() > 10) points.resize(10);
  for (const auto& c : points) {
    const int64_t x = c[0], y = c[1], z = c[2];
    // local = field[x-2:x+3, y-2:y+3, z-2:z+3, :], read in place (no tensor asked for)
    const int64_t x0 = std::max<int64_t>(0, x - 2), x1 = std::min(field_shape_[0], x + 3);
    const int64_t y0 = std::max<int64_t>(0, y - 2), y1 = std::min(field_shape_[1], y + 3);
    const int64_t z0 = std::max<int64_t>(0, z - 2), z1 = std::min(field_shape_[2], z + 3);
    FieldBlock local;
    local.data = field.data_ptr<float>() + x0 * field.stride(0) + y0 * field.stride(1) +
                 z0 * field.stride(2);
    local.sizes = {x1 - x0, y1 - y0, z1 - z0};
    local.strides = {field.stride(0), field.stride(1), field.stride(2)};
    local.channels = field.size(3);
    const int64_t feature_center =
        exact_abs_argmax(field.data_ptr<float>() + field.stride(0) * x + field.stride(1) * y +
                             field.stride(2) * z,
                         field.size(3), field.stride(3));
    Salient s;
    s.center = c;
    s.feature_center = feature_center;
    s.pattern = extract_pattern(field, c, feature_center);
    s.strength = exact_block_abs_max(local);
    s.stability = 1.0 / (static_cast<double>(exact_block_std(local)) + 1e-6);
    // _compute_coherence: (mean|gx| + mean|gy| + mean|gz|) / 3.0 as the 0-dim float32 tensors'
    // arithmetic, gx = torch.diff(local, 1, 0) (zeros where the dim has one plane), ...
    const float grad_mag =
        ((exact_block_diff_abs_mean(local, 0) + exact_block_diff_abs_mean(local, 1)) +
         exact_block_diff_abs_mean(local, 2)) /
        static_cast<float>(3.0);
    const int64_t local_numel = local.sizes[0] * local.sizes[1] * local.sizes[2] * local.channels;
    s.coherence = local_numel < 2 ? 0.0 : 1.0 / (1.0 + static_cast<double>(grad_mag));
    out.push_back(std::move(s));
  }
  return out;
}

// TopologyRegionSystem._find_matching_region
std::optional<std::size_t> TopologyRegionSystem::find_matching_region(
    const torch::Tensor& pattern, const std::array<int64_t, 3>& c) const {
  std::optional<std::size_t> best;
  double best_similarity = 0.0;
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    const auto& r = regions_[i];
    const int64_t dx = r.center[0] - c[0], dy = r.center[1] - c[1], dz = r.center[2] - c[2];
    // np.sqrt(d2) < 5.0 exactly when the integer d2 < 25
    if (dx * dx + dy * dy + dz * dz >= 25) continue;
    if (pattern.sizes() != r.pattern.sizes()) continue;
    // F.cosine_similarity(pattern.flatten()[None], r.pattern.flatten()[None]) (both contiguous:
    // the patterns are division and sum outputs, or loaded)
    const torch::Tensor a = pattern.contiguous(), b = r.pattern.contiguous();
    const auto similarity = static_cast<double>(
        exact_cosine_similarity(a.data_ptr<float>(), b.data_ptr<float>(), a.numel()));
    if (similarity > similarity_threshold_ && similarity > best_similarity) {
      best = i;
      best_similarity = similarity;
    }
  }
  return best;
}

// TopologyRegionSystem.detect_topology_regions
std::vector<std::string> TopologyRegionSystem::detect(const torch::Tensor& field,
                                                      const std::vector<double>& motor,
                                                      double now_s) {
  start_clock(now_s);
  std::vector<std::string> activated;
  for (Salient& s : find_salient_regions(field)) {
    auto matched = find_matching_region(s.pattern, s.center);
    if (matched) {
      TopologyRegion& region = regions_[*matched];
      region.update_activation(s.strength, motor, now_s);
      region.pattern = region.pattern * 0.9 + s.pattern * 0.1;
      activated.push_back(region.id);
    } else if (s.strength > stability_threshold_) {
      TopologyRegion region;
      region.id = "region_" + std::to_string(region_count_);
      region_count_ += 1;
      region.center = s.center;
      region.feature_center = s.feature_center;
      region.pattern = s.pattern.clone();
      region.mean_activation = s.strength;
      region.stability = s.stability;
      region.coherence = s.coherence;
      region.discovery_time = now_s;
      region.last_activation = now_s;
      regions_.push_back(std::move(region));
      discovery_count_ += 1;
      activated.push_back(regions_.back().id);
      // _check_abstraction_formation never fires (each new ID is counted once, B9): left out.
    }
  }
  for (const auto& id : activated) {
    activation_history_.push_back({now_s, id, find(id)->mean_activation});
    if (activation_history_.size() > 100) activation_history_.pop_front();
  }
  update_causal_links(activated, now_s);
  if (now_s - last_cleanup_time_ > cleanup_interval_) {
    cleanup_weak_regions(now_s);
    last_cleanup_time_ = now_s;
  }
  return activated;
}

// TopologyRegionSystem._update_causal_links
void TopologyRegionSystem::update_causal_links(const std::vector<std::string>& current,
                                               double now_s) {
  for (const auto& h : activation_history_) {
    if (now_s - h.time > causal_window_) continue;
    for (const auto& region2 : current) {
      if (region2 == h.id) continue;
      const double time_diff = now_s - h.time;
      const double causal_strength = (1.0 / (1.0 + time_diff)) * py_min(h.strength, 1.0) * 0.1;
      TopologyRegion* r1 = find(h.id);
      TopologyRegion* r2 = find(region2);
      if (r1 != nullptr && r2 != nullptr) {
        r1->causal_successors[region2] += causal_strength;
        r2->causal_predecessors[h.id] += causal_strength;
        r1->associated_regions.insert(region2);
        r2->associated_regions.insert(h.id);
      }
    }
  }
}

// TopologyRegionSystem._cleanup_weak_regions
void TopologyRegionSystem::cleanup_weak_regions(double now_s) {
  if (static_cast<int64_t>(regions_.size()) <= max_regions_) return;
  std::vector<std::pair<std::string, double>> scores;
  for (const auto& r : regions_) {
    const double time_factor = std::exp(-(now_s - r.last_activation) / 3600.0);
    scores.emplace_back(r.id,
                        r.importance * time_factor * static_cast<double>(r.consolidation_level));
  }
  std::stable_sort(scores.begin(), scores.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::size_t n_remove = regions_.size() - static_cast<std::size_t>(max_regions_);
  for (std::size_t i = 0; i < n_remove; ++i) {
    TopologyRegion* r = find(scores[i].first);
    if (r->abstraction_level == 0 && r->associated_regions.size() < 5) {
      const std::string id = r->id;
      regions_.erase(std::find_if(regions_.begin(), regions_.end(),
                                  [&](const TopologyRegion& x) { return x.id == id; }));
    }
  }
}

// TopologyRegionSystem.update_sensory_predictions
void TopologyRegionSystem::update_sensory_predictions(int64_t sensory_dim, double now_s) {
  start_clock(now_s);
  if (regions_.empty() || sensory_dim == 0) return;
  std::vector<TopologyRegion*> active;
  for (auto& r : regions_)
    if (now_s - r.last_activation < 10.0) active.push_back(&r);
  if (active.empty()) return;
  // sorted(..., key=stability * importance, reverse=True): stable, descending
  std::stable_sort(active.begin(), active.end(),
                   [](const TopologyRegion* a, const TopologyRegion* b) {
                     return a->stability * a->importance > b->stability * b->importance;
                   });
  const int64_t n_active = static_cast<int64_t>(active.size());
  // Python's // on non-negative ints
  const int64_t spr = std::max<int64_t>(1, sensory_dim / std::max<int64_t>(1, n_active));
  for (int64_t i = 0; i < n_active; ++i) {
    TopologyRegion& region = *active[i];
    if (!region.is_sensory_predictive) {
      const int64_t start = (i * spr) % sensory_dim;
      const int64_t end = std::min(start + spr, sensory_dim);
      region.sensor_indices.clear();
      for (int64_t k = start; k < end; ++k) region.sensor_indices.push_back(k);
      region.is_sensory_predictive = true;
      region.prediction_confidence = 0.3;
    } else if (region.prediction_confidence < 0.2 && region.prediction_history.size() > 10) {
      const int64_t shift = spr / 2;
      for (auto& idx : region.sensor_indices) idx = (idx + shift) % sensory_dim;
      region.prediction_confidence = 0.3;
    } else if (region.prediction_confidence > 0.7) {
      if (static_cast<int64_t>(region.sensor_indices.size()) < spr * 2) {
        std::set<int64_t> all_assigned;
        for (const auto& r : regions_)
          if (r.is_sensory_predictive)
            all_assigned.insert(r.sensor_indices.begin(), r.sensor_indices.end());
        for (int64_t k = 0; k < sensory_dim; ++k)
          if (!all_assigned.count(k)) {
            region.sensor_indices.push_back(k);
            break;
          }
      }
    }
  }
}

std::vector<TopologyRegion*> TopologyRegionSystem::predictive_regions() {
  std::vector<TopologyRegion*> out;
  for (auto& r : regions_)
    if (r.is_sensory_predictive) out.push_back(&r);
  return out;
}

int64_t TopologyRegionSystem::causal_link_count() const {
  int64_t n = 0;
  for (const auto& r : regions_) n += static_cast<int64_t>(r.causal_successors.size());
  return n;
}

int64_t TopologyRegionSystem::active_count(double now_s, double window_s) const {
  int64_t n = 0;
  for (const auto& r : regions_)
    if (now_s - r.last_activation < window_s) ++n;
  return n;
}

void TopologyRegionSystem::save(StateWriter& w, const std::string& part) const {
  nlohmann::json regions = nlohmann::json::array();
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    const auto& r = regions_[i];
    const std::string key = part + ".region" + std::to_string(i);
    w.tensor(key + ".pattern", r.pattern);
    if (r.prediction_momentum.defined()) w.tensor(key + ".momentum", r.prediction_momentum);
    regions.push_back({{"id", r.id},
                       {"center", r.center},
                       {"feature_center", r.feature_center},
                       {"mean_activation", r.mean_activation},
                       {"stability", r.stability},
                       {"coherence", r.coherence},
                       {"discovery_time", r.discovery_time},
                       {"last_activation", r.last_activation},
                       {"activation_count", r.activation_count},
                       {"total_strength", r.total_strength},
                       {"importance", r.importance},
                       {"consolidation_level", r.consolidation_level},
                       {"associated", r.associated_regions},
                       {"predecessors", r.causal_predecessors},
                       {"successors", r.causal_successors},
                       {"abstraction_level", r.abstraction_level},
                       {"predictive", r.is_sensory_predictive},
                       {"sensor_indices", r.sensor_indices},
                       {"prediction_history", std::vector<double>(r.prediction_history.begin(),
                                                                  r.prediction_history.end())},
                       {"prediction_confidence", r.prediction_confidence},
                       {"has_momentum", r.prediction_momentum.defined()},
                       {"motor_sequence",
                        std::vector<std::string>(r.motor_sequence.begin(), r.motor_sequence.end())},
                       {"behavioral_monotony", r.behavioral_monotony}});
  }
  nlohmann::json history = nlohmann::json::array();
  for (const auto& h : activation_history_) history.push_back({h.time, h.id, h.strength});
  w.state[part] = {{"regions", regions},
                   {"region_count", region_count_},
                   {"discovery_count", discovery_count_},
                   {"activation_history", history},
                   {"last_cleanup_time", last_cleanup_time_},
                   {"clock_started", clock_started_}};
}

void TopologyRegionSystem::load(const StateReader& rd, const std::string& part) {
  const auto& j = rd.at(part);
  std::vector<TopologyRegion> regions;
  std::size_t i = 0;
  for (const auto& jr : j.at("regions")) {
    TopologyRegion r;
    const std::string key = part + ".region" + std::to_string(i++);
    r.id = jr.at("id").get<std::string>();
    r.center = jr.at("center").get<std::array<int64_t, 3>>();
    r.feature_center = jr.at("feature_center").get<int64_t>();
    r.pattern = rd.tensor(key + ".pattern");
    r.mean_activation = jr.at("mean_activation").get<double>();
    r.stability = jr.at("stability").get<double>();
    r.coherence = jr.at("coherence").get<double>();
    r.discovery_time = jr.at("discovery_time").get<double>();
    r.last_activation = jr.at("last_activation").get<double>();
    r.activation_count = jr.at("activation_count").get<int64_t>();
    r.total_strength = jr.at("total_strength").get<double>();
    r.importance = jr.at("importance").get<double>();
    r.consolidation_level = jr.at("consolidation_level").get<int64_t>();
    r.associated_regions = jr.at("associated").get<std::set<std::string>>();
    r.causal_predecessors = jr.at("predecessors").get<std::map<std::string, double>>();
    r.causal_successors = jr.at("successors").get<std::map<std::string, double>>();
    r.abstraction_level = jr.at("abstraction_level").get<int64_t>();
    r.is_sensory_predictive = jr.at("predictive").get<bool>();
    r.sensor_indices = jr.at("sensor_indices").get<std::vector<int64_t>>();
    auto ph = jr.at("prediction_history").get<std::vector<double>>();
    r.prediction_history.assign(ph.begin(), ph.end());
    r.prediction_confidence = jr.at("prediction_confidence").get<double>();
    if (jr.at("has_momentum").get<bool>()) r.prediction_momentum = rd.tensor(key + ".momentum");
    auto ms = jr.at("motor_sequence").get<std::vector<std::string>>();
    r.motor_sequence.assign(ms.begin(), ms.end());
    r.behavioral_monotony = jr.at("behavioral_monotony").get<double>();
    regions.push_back(std::move(r));
  }
  std::deque<Activation> history;
  for (const auto& h : j.at("activation_history"))
    history.push_back({h.at(0).get<double>(), h.at(1).get<std::string>(), h.at(2).get<double>()});
  regions_ = std::move(regions);
  activation_history_ = std::move(history);
  region_count_ = j.at("region_count").get<int64_t>();
  discovery_count_ = j.at("discovery_count").get<int64_t>();
  last_cleanup_time_ = j.at("last_cleanup_time").get<double>();
  clock_started_ = j.at("clock_started").get<bool>();
}

}  // namespace fieldbrain::legacy
