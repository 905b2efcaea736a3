#include "brain/legacy/hierarchical_prediction.h"

#include <algorithm>
#include <cmath>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/exact_block_sums.h"
#include "brain/legacy/field_loops.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

namespace {
constexpr std::array<double, 4> kGains = {1.0, 0.5, 0.3, 0.2};
constexpr std::array<double, 4> kLearningRates = {0.3, 0.1, 0.03, 0.01};
constexpr std::array<const char*, 4> kNames = {"immediate", "short_term", "long_term", "abstract"};
}  // namespace

HierarchicalPredictionImpl::HierarchicalPredictionImpl(HierarchicalPredictionOptions options,
                                                       at::Generator& gen)
    : options_(std::move(options)) {
  const int64_t S = options_.sensory_dim();
  for (int k = 0; k < 4; ++k) {
    // torch.nn.init.xavier_uniform_(w, gain): fan_in = S, fan_out = 16
    torch::Tensor w = torch::zeros({16, S}, torch::kFloat32);
    const double std_ = kGains[k] * std::sqrt(2.0 / static_cast<double>(S + 16));
    const double a = std::sqrt(3.0) * std_;
    w.uniform_(-a, a, gen);
    weights_[k] = register_buffer(std::string(kNames[k]) + "_weights", w);
  }
}

// HierarchicalPredictionSystem._calculate_confidence
double HierarchicalPredictionImpl::calculate_confidence(const std::deque<double>& errors) {
  if (errors.size() < 5) return 0.5;
  const std::size_t n = errors.size();
  const double mean_recent = python_mean_range(errors, tail_begin(errors, 10), n);
  double confidence = 1.0 - py_min(1.0, mean_recent * 2.0);
  if (n > 20) {
    const double mean_old = python_mean_range(errors, n - 20, n - 10);
    if (mean_recent < mean_old) confidence = py_min(1.0, confidence * 1.1);
  }
  return confidence;
}

// torch.mean(field[..., 16k:16k+16], (0, 1, 2)) for each k, and torch.mean(torch.abs(field[...,
// :32])), summed in ATen's orders (aten_sums.h: each 16-channel slice's column sums; the abs a
// fresh contiguous tensor summed as one row).
torch::Tensor HierarchicalPredictionImpl::channel_means(const torch::Tensor& field_in,
                                                       double* abs_mean_32) {
  const torch::Tensor field = field_in.contiguous();
  const int64_t C = field.size(-1), V = field.numel() / C;
  const float* f = field.data_ptr<float>();
  torch::Tensor means = torch::empty({C}, torch::kFloat32);
  float* m = means.data_ptr<float>();
  aten_slice_column_sums(f, V, C, 16, C / 16, m);
  for (int64_t c = 0; c < C; ++c) m[c] = m[c] / static_cast<float>(V);
  if (abs_mean_32 != nullptr)
    *abs_mean_32 = channel_abs_sum(f, V, C, 32) / static_cast<float>(V * 32);
  return means;
}

// HierarchicalPredictionSystem.extract_hierarchical_predictions
HierarchicalPredictionResult HierarchicalPredictionImpl::extract(
    const torch::Tensor& channel_means) const {
  HierarchicalPredictionResult r;
  for (int k = 0; k < 4; ++k) {
    torch::Tensor encoding = channel_means.index({Slice(16 * k, 16 * k + 16)});
    r.predictions[k] = torch::tanh(torch::matmul(encoding, weights_[k]));
    r.confidences[k] = calculate_confidence(errors_[k]);
  }
  return r;
}

// HierarchicalPredictionSystem.combine_hierarchical_predictions
torch::Tensor HierarchicalPredictionImpl::combine(const HierarchicalPredictionResult& p) {
  const auto& c = p.confidences;
  const double total_weight = c[0] + c[1] * 0.5 + c[2] * 0.25 + c[3] * 0.125;
  if (total_weight < 0.01) return p.predictions[0];
  return (p.predictions[0] * c[0] + p.predictions[1] * c[1] * 0.5 + p.predictions[2] * c[2] * 0.25 +
          p.predictions[3] * c[3] * 0.125) /
         total_weight;
}

// HierarchicalPredictionSystem._encode_pattern_to_field (error_magnitude:
// torch.mean(torch.abs(error)), taken by the caller)
void HierarchicalPredictionImpl::encode_pattern_to_field(const float* pattern, int64_t length,
                                                         int64_t first_channel,
                                                         double error_magnitude,
                                                         std::vector<FieldBlobWrite>& out) const {
  const auto& shape = options_.field_shape();
  if (!(error_magnitude > 0.01)) return;
  const int64_t n = std::min<int64_t>(length, 16);
  for (int64_t i = 0; i < n; ++i) {
    // int((i % 4) * R / 4 + R / 8): true divisions in double, then truncation
    const auto xc = static_cast<int64_t>(static_cast<double>((i % 4) * shape[0]) / 4.0 +
                                         static_cast<double>(shape[0]) / 8.0);
    const auto yc = static_cast<int64_t>(static_cast<double>((i / 4) * shape[1]) / 4.0 +
                                         static_cast<double>(shape[1]) / 8.0);
    const int64_t zc = shape[2] / 2;
    const int64_t spread =
        std::max<int64_t>(1, std::min<int64_t>(3, static_cast<int64_t>(error_magnitude * 10)));
    const double value = static_cast<double>(pattern[i]) * (0.5 + error_magnitude);
    out.push_back({std::max<int64_t>(0, xc - spread), std::min(shape[0], xc + spread + 1),
                   std::max<int64_t>(0, yc - spread), std::min(shape[1], yc + spread + 1),
                   std::max<int64_t>(0, zc - spread), std::min(shape[2], zc + spread + 1),
                   first_channel + i, value});
  }
}

// torch.mean(torch.stack(history[first:]), 0) into out[S]: the rows gathered into one
// contiguous [n, S] block (what stack makes) and summed down its columns in ATen's order.
void HierarchicalPredictionImpl::history_mean(std::size_t first, float* out) {
  const int64_t S = history_[first].size(0), n = static_cast<int64_t>(history_.size() - first);
  history_rows_.resize(static_cast<std::size_t>(n * S));
  float* rows = history_rows_.data();
  for (std::size_t i = first; i < history_.size(); ++i, rows += S) {
    TORCH_CHECK(history_[i].size(0) == S, "hierarchical history: rows of different lengths");
    std::copy_n(history_[i].data_ptr<float>(), S, rows);
  }
  exact_column_means(history_rows_.data(), n, S, out);
}

// HierarchicalPredictionSystem.process_hierarchical_errors. The targets, errors and weight
// updates are loops over the tensors' memory with the ATen ops' float32 roundings (a scalar
// operand rounded to float first; outer(e, err) * lr added to the weights), the means in
// ATen's summation order (aten_sums.h, exact_block_sums.h).
std::vector<FieldBlobWrite> HierarchicalPredictionImpl::process_errors(
    const HierarchicalPredictionResult& predicted, const torch::Tensor& actual_in,
    const torch::Tensor& current_field) {
  std::vector<FieldBlobWrite> writes;
  const torch::Tensor actual = actual_in.contiguous();
  history_.push_back(actual.clone());
  if (history_.size() > 1000) history_.pop_front();
  const int64_t A = actual.size(0);
  const int64_t min_dim = std::min(A, predicted.predictions[0].size(0));
  const std::size_t n = history_.size();
  std::vector<float>& target = target_scratch_;
  std::vector<float>& error = error_scratch_;
  target.resize(static_cast<std::size_t>(A));
  error.resize(static_cast<std::size_t>(min_dim));
  torch::Tensor means;  // the current field's channel means, when a level first needs them
  for (int k = 0; k < 4; ++k) {
    if (k == 0) {
      std::copy_n(actual.data_ptr<float>(), A, target.data());
    } else {
      const std::size_t window = k == 1 ? 10 : 100;  // abstract: all of it once >= 100
      if (n < window) continue;
      history_mean(k == 3 ? 0 : n - window, target.data());
    }
    const torch::Tensor pk = predicted.predictions[k].contiguous();
    const float* pp = pk.data_ptr<float>();
    for (int64_t j = 0; j < min_dim; ++j) error[j] = target[j] - pp[j];
    const double error_magnitude = exact_abs_mean(error.data(), min_dim);
    errors_[k].push_back(error_magnitude);
    if (errors_[k].size() > 50) errors_[k].pop_front();
    if (!means.defined()) means = channel_means(current_field);
    const float* enc = means.data_ptr<float>() + 16 * k;
    // weights[k][:, :min_dim] += outer(encoding, error) * lr
    TORCH_CHECK(weights_[k].is_contiguous(), "hierarchical weights must be contiguous");
    float* w = weights_[k].data_ptr<float>();
    const int64_t S = weights_[k].size(1);
    const auto lr = static_cast<float>(kLearningRates[k]);
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < min_dim; ++j) w[i * S + j] = w[i * S + j] + enc[i] * error[j] * lr;
    encode_pattern_to_field(target.data(), A, 16 * k, error_magnitude, writes);
  }
  return writes;
}

void HierarchicalPredictionImpl::save(StateWriter& w, const std::string& part) const {
  nlohmann::json errors = nlohmann::json::array();
  for (int k = 0; k < 4; ++k) {
    w.tensor(part + "." + kNames[k] + "_weights", weights_[k]);
    errors.push_back(std::vector<double>(errors_[k].begin(), errors_[k].end()));
  }
  if (!history_.empty())
    w.tensor(part + ".history",
             torch::stack(std::vector<torch::Tensor>(history_.begin(), history_.end())));
  w.state[part] = {{"errors", errors}, {"history_length", history_.size()}};
}

void HierarchicalPredictionImpl::load(const StateReader& r, const std::string& part) {
  const auto& j = r.at(part);
  const int64_t S = options_.sensory_dim();
  std::array<torch::Tensor, 4> weights;
  std::array<std::deque<double>, 4> errors;
  for (int k = 0; k < 4; ++k) {
    weights[k] = r.tensor(part + "." + kNames[k] + "_weights", torch::kFloat32, {16, S});
    auto e = j.at("errors").at(k).get<std::vector<double>>();
    errors[k].assign(e.begin(), e.end());
  }
  std::deque<torch::Tensor> history;
  const auto hl = j.at("history_length").get<int64_t>();
  if (hl > 0) {
    torch::Tensor h = r.tensor(part + ".history");
    if (h.dim() != 2 || h.size(0) != hl)
      throw std::runtime_error("legacy state: hierarchical history has the wrong shape");
    for (int64_t i = 0; i < hl; ++i) history.push_back(h[i].clone());
  }
  for (int k = 0; k < 4; ++k) weights_[k].copy_(weights[k]);
  errors_ = std::move(errors);
  history_ = std::move(history);
}

}  // namespace fieldbrain::legacy
