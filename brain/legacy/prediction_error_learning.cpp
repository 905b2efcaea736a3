#include "brain/legacy/prediction_error_learning.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "brain/legacy/exact_block_sums.h"
#include "brain/legacy/field_loops.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

PredictionErrorLearning::PredictionErrorLearning(std::vector<int64_t> field_shape)
    : field_shape_(std::move(field_shape)) {}

namespace {

// box.add_(delta) on a contiguous [R0, R1, R2, C] float field: x + delta (x - |delta| for a
// negative delta: the same float as sub_ of its magnitude)
void add_to_box(torch::Tensor& field, std::pair<int64_t, int64_t> xs,
                std::pair<int64_t, int64_t> ys, std::pair<int64_t, int64_t> zs, float delta) {
  const int64_t R1 = field.size(1), R2 = field.size(2), C = field.size(3);
  float* f = field.data_ptr<float>();
  for (int64_t x = xs.first; x < xs.second; ++x)
    for (int64_t y = ys.first; y < ys.second; ++y)
      for (int64_t z = zs.first; z < zs.second; ++z) {
        float* v = f + ((x * R1 + y) * R2 + z) * C;
        for (int64_t c = 0; c < C; ++c) v[c] = v[c] + delta;
      }
}

}  // namespace

// PredictionErrorLearning.error_to_field
PredictionErrorLearning::ErrorField PredictionErrorLearning::error_to_field(
    const torch::Tensor& e, const std::vector<const TopologyRegion*>& regions) {
  torch::Tensor& buffer = buffers_[next_buffer_];
  next_buffer_ = 1 - next_buffer_;
  if (!buffer.defined() || buffer.storage().use_count() > 1)
    buffer = torch::empty(field_shape_, torch::kFloat32);
  torch::Tensor error_field = buffer;
  // error_field = zeros: only the boxes' voxels are cleared here (all of them before any box
  // adds, as boxes overlap); the walk below takes every other voxel as zeros (0 + add) while
  // it writes it, instead of a walk of its own over the whole field first
  const int64_t n = e.size(0);
  const float* ep = e.data_ptr<float>();
  const int64_t R0 = field_shape_[0], R1 = field_shape_[1], R2 = field_shape_[2];
  const int64_t C = field_shape_[3];
  live_voxels_.assign(static_cast<size_t>(R0 * R1 * R2), 0);
  boxes_.clear();
  for (const TopologyRegion* region : regions) {
    if (region == nullptr || !region->is_sensory_predictive) continue;
    std::vector<double> region_errors;
    for (int64_t s : region->sensor_indices)
      if (s < n) region_errors.push_back(static_cast<double>(ep[s]));
    if (region_errors.empty()) continue;
    const double avg_error = numpy_mean(region_errors);
    // error_by_region (a per-region history) is read by no part of the cycle: not kept.
    const int64_t x = region->center[0], y = region->center[1], z = region->center[2];
    const double error_strength = py_min(1.0, avg_error * 2.0);
    // error_field[box].add_(error_strength) or .sub_(consolidation): each value plus (minus) the
    // scalar rounded to float, boxes in the regions' order
    const int64_t sp = avg_error > 0.1 ? 1 : 2;
    const float delta = avg_error > 0.1 ? static_cast<float>(error_strength)
                                        : -static_cast<float>(0.1 * (1.0 - avg_error));
    boxes_.push_back({{std::max<int64_t>(0, x - sp), std::min(R0, x + sp + 1)},
                      {std::max<int64_t>(0, y - sp), std::min(R1, y + sp + 1)},
                      {std::max<int64_t>(0, z - sp), std::min(R2, z + sp + 1)},
                      delta});
  }
  float* ef = error_field.data_ptr<float>();
  for (const ErrorBox& b : boxes_)
    for (int64_t x = b.xs.first; x < b.xs.second; ++x)
      for (int64_t y = b.ys.first; y < b.ys.second; ++y)
        for (int64_t z = b.zs.first; z < b.zs.second; ++z) {
          const int64_t v = (x * R1 + y) * R2 + z;
          if (live_voxels_[static_cast<size_t>(v)] == 0) std::fill_n(ef + v * C, C, 0.0f);
          live_voxels_[static_cast<size_t>(v)] = 1;
        }
  for (const ErrorBox& b : boxes_) add_to_box(error_field, b.xs, b.ys, b.zs, b.delta);
  const double global_error = e.is_contiguous() && e.dim() == 1
                                  ? static_cast<double>(exact_abs_mean(ep, n))
                                  : torch::mean(torch::abs(e)).item<double>();
  error_history_.push_back(global_error);
  if (error_history_.size() > 100) error_history_.pop_front();
  // error_field.add_(global_error * 0.05), with the mean and max of |E| in the same walk
  ErrorField out;
  out.field = error_field;
  const float add = static_cast<float>(global_error * 0.05);
  const AbsStats st = add_and_abs_stats(ef, add, error_field.numel(), C, live_voxels_.data());
  out.mean_abs = st.sum / static_cast<float>(error_field.numel());
  out.max_abs = st.has_nan ? std::numeric_limits<double>::quiet_NaN() : st.max;
  return out;
}

// PredictionErrorLearning.compute_learning_modulation (error_variance and resource_bias are
// telemetry the cycle never reads: not computed).
LearningModulation PredictionErrorLearning::compute_learning_modulation(
    const ErrorField& error) const {
  LearningModulation m;
  m.set = true;
  m.mean_error = error.mean_abs;
  m.max_error = error.max_abs;
  m.self_modification_boost = py_min(3.0, 1.0 + m.mean_error * 4.0);
  m.learning_rate = 0.1 * m.self_modification_boost;
  if (error_history_.size() > 20) {
    const std::size_t n = error_history_.size();
    const double recent = numpy_mean_range(error_history_, n - 10, n);
    const double older = numpy_mean_range(error_history_, n - 20, n - 10);
    const double improvement = older - recent;
    m.exploration_boost = improvement < 0.001 ? 1.5 : 0.8;
  } else {
    m.exploration_boost = 1.0;
  }
  return m;
}

// PredictionErrorLearning.allocate_field_resources
torch::Tensor PredictionErrorLearning::resource_mask(const torch::Tensor& error_field) {
  torch::Tensor error_norm = torch::abs(error_field);
  error_norm = error_norm / (torch::max(error_norm) + 1e-8);
  return error_norm.index({"...", Slice(0, 4)}).contiguous();
}

void PredictionErrorLearning::resource_terms(const torch::Tensor& error_field, float max_abs,
                                             torch::Tensor& terms, torch::Tensor& scratch) {
  const torch::Tensor e = error_field.contiguous();
  const int64_t C = e.size(-1), V = e.numel() / C;
  if (!terms.defined() || terms.size(0) != V || terms.storage().use_count() > 1)
    terms = torch::empty({V, 12}, torch::kFloat32);
  if (!scratch.defined() || scratch.size(0) != V * 4)
    scratch = torch::empty({V * 4}, torch::kFloat32);
  const float den = max_abs + static_cast<float>(1e-8);
  const auto c01 = static_cast<float>(0.1), c02 = static_cast<float>(0.2);
  const float* p = e.data_ptr<float>();
  float* t = terms.data_ptr<float>();
  float* drive = scratch.data_ptr<float>();
  for (int64_t v = 0; v < V; ++v)
    for (int64_t c = 0; c < 4; ++c) {
      const float m = std::fabs(p[v * C + c]) / den;
      t[v * 12 + c] = (0.5f + (1.0f - m) * 0.5f) * c01;
      t[v * 12 + 4 + c] = (m * c02 - c01) * c01;
      drive[v * 4 + c] = m * 2.0f - 0.5f;
    }
  scratch.sigmoid_();
  for (int64_t v = 0; v < V; ++v)
    for (int64_t c = 0; c < 4; ++c) t[v * 12 + 8 + c] = drive[v * 4 + c] * c01;
}

torch::Tensor PredictionErrorLearning::allocate_field_resources(const torch::Tensor& mask4,
                                                                const torch::Tensor& dynamics) {
  torch::Tensor nd = dynamics.clone();
  nd.index_put_({"...", Slice(0, 4)},
                dynamics.index({"...", Slice(0, 4)}) * 0.9 + (0.5 + (1.0 - mask4) * 0.5) * 0.1);
  nd.index_put_({"...", Slice(4, 8)},
                dynamics.index({"...", Slice(4, 8)}) * 0.9 + (mask4 * 0.2 - 0.1) * 0.1);
  nd.index_put_({"...", Slice(12, 16)}, dynamics.index({"...", Slice(12, 16)}) * 0.9 +
                                            torch::sigmoid(mask4 * 2.0 - 0.5) * 0.1);
  return nd;
}

void PredictionErrorLearning::save(StateWriter& w, const std::string& part) const {
  w.state[part] = {
      {"error_history", std::vector<double>(error_history_.begin(), error_history_.end())}};
}

void PredictionErrorLearning::load(const StateReader& r, const std::string& part) {
  auto v = r.at(part).at("error_history").get<std::vector<double>>();
  error_history_.assign(v.begin(), v.end());
}

}  // namespace fieldbrain::legacy
