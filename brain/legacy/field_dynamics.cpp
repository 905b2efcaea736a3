#include "brain/legacy/field_dynamics.h"

#include <cmath>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/exact_dot.h"
#include "brain/legacy/exact_normal.h"
#include "brain/legacy/exact_tanh.h"
#include "brain/legacy/field_loops.h"
#include "brain/legacy/novelty_sample.h"
#include "brain/legacy/python_numerics.h"
#include "brain/legacy/traveling_waves.h"

namespace fieldbrain::legacy {

using torch::indexing::None;
using torch::indexing::Slice;

// EvolvedFieldDynamics.__init__ (+ _initialize_wave_vectors)
FieldDynamicsImpl::FieldDynamicsImpl(FieldDynamicsOptions options, int64_t n_waves,
                                     at::Generator& gen)
    : options_(std::move(options)) {
  content_features_ = options_.field_shape().back() - 16;
  spatial_features_ = content_features_ - 16;
  torch::Tensor wv = at::randn({n_waves, 3}, gen, torch::kFloat32);
  for (int64_t i = 0; i < n_waves; ++i) {
    torch::Tensor row = wv[i];
    wv[i] = row / (torch::norm(row) + 1e-8);  // safe_normalize
  }
  wave_vectors_ = register_buffer("wave_vectors", wv);
}

// EvolvedFieldDynamics.initialize_field_dynamics
void FieldDynamicsImpl::initialize_field_dynamics(torch::Tensor& field, at::Generator& gen) const {
  torch::Tensor dynamics = field.index({"...", Slice(content_features_, None)});
  auto draw = [&](int64_t c0) {
    torch::Tensor part = dynamics.index({"...", Slice(c0, c0 + 4)});
    return at::randn(part.sizes(), gen, torch::kFloat32);
  };
  dynamics.index_put_({"...", Slice(0, 4)}, draw(0) * 0.1 + 2.0);
  dynamics.index_put_({"...", Slice(4, 8)}, draw(4) * 0.05);
  dynamics.index_put_({"...", Slice(8, 12)}, draw(8) * 0.05);
  dynamics.index_put_({"...", Slice(12, 16)}, draw(12) * 0.2);
}

// EvolvedFieldDynamics._generate_traveling_waves: the [R,R,R] wave field (the original expands
// it over the 48 content channels; each channel's value is this one), already * 0.1.
torch::Tensor FieldDynamicsImpl::generate_traveling_waves(const std::vector<int64_t>& shape) {
  // the original's ATen expression (traveling_waves_aten), as loops where they are its floats
  const torch::Tensor& waves = traveling_waves_.generate(wave_vectors_, shape[0], phase_offset_,
                                                         options_.spontaneous_rate() * 5.0);
  phase_offset_ += 0.1;
  return waves;
}

// EvolvedFieldDynamics._update_self_modification_strength
void FieldDynamicsImpl::update_self_modification_strength() {
  const double base = 0.01 + 0.09 * std::log10(1 + static_cast<double>(evolution_count_) / 1000);
  double s = error_modulation_.set ? base * error_modulation_.self_modification_boost : base;
  self_modification_strength_ = py_min(0.3, s);
}

// EvolvedFieldDynamics.evolve_field, as four walks over the field (field_loops.h) instead of
// ~40 ATen ops each walking it: decay + spontaneous activity, learned diffusion, the coupling's
// tanh argument (tanh itself stays ATen's, on a contiguous buffer as in the original, so its
// vectorised values are the original's), then coupling + the dynamics' self-modification.
// The buffers are this module's scratch, reused every cycle; the result is the scratch
// `evolved_`, valid until the next call.
const torch::Tensor& FieldDynamicsImpl::evolve_field(const torch::Tensor& field_in,
                                                     at::Generator& gen) {
  const torch::Tensor field = field_in.contiguous();
  const int64_t R = field.size(0), V = R * R * R;
  const int64_t C = content_features_;
  if (!scratch_a_.defined() || scratch_a_.size(0) != V) {
    scratch_a_ = torch::empty({V, C}, torch::kFloat32);
    scratch_b_ = torch::empty({V, C}, torch::kFloat32);
    scratch_act_ = torch::empty({V, C}, torch::kFloat32);
    noise_ = torch::empty({R, R, R, C}, torch::kFloat32);
    strengths_ = torch::empty({V * 4}, torch::kFloat32);
  }
  if (!evolved_.defined() || evolved_.sizes() != field.sizes() ||
      evolved_.storage().use_count() > 1)
    evolved_ = torch::empty_like(field);
  double global_decay = 0.999, exploration = 0.5, internal_drive = 0.5;
  if (modulation_.set) {
    global_decay = modulation_.decay_rate;
    exploration = modulation_.exploration_drive;
    internal_drive = modulation_.internal_drive;
  }
  const float* f = field.data_ptr<float>();
  // 1. multi-scale decay with working memory, 2. spontaneous activity (noise drawn as
  // at::randn(shape, gen) draws it: normal_ on a fresh [R,R,R,48]; the mean plasticity it
  // computes is never used: not computed)
  torch::Tensor waves;
  if (internal_drive > 0) {
    // ATen's draw without its per-value generator call, where it is ATen's bit for bit
    // (exact_normal.h); ATen's own otherwise
    if (!exact_normal_fill(noise_.data_ptr<float>(), noise_.numel(), 0.0, 1.0, gen))
      noise_.normal_(0, 1, gen);
    waves = generate_traveling_waves({R, R, R, C});
  }
  decay_spontaneous(f, V, global_decay, options_.decay_multiplier(),
                    internal_drive > 0 ? noise_.data_ptr<float>() : nullptr,
                    options_.spontaneous_rate(), waves.defined() ? waves.data_ptr<float>() : nullptr,
                    internal_drive, scratch_a_.data_ptr<float>());
  // 3. learned diffusion with the strengths tanh(dynamics[4:8]) * 0.1: the tanh is ATen's
  // vectorised one, run on a contiguous copy of the four channels (each value's tanh is the
  // same as on the original's strided slice: ATen's tanh is lanewise)
  // (the exact tanh where it is ATen's: exact_tanh.h; it and the coupling's below)
  const bool exact_tanh = exact_tanh_available();
  float* strengths = strengths_.data_ptr<float>();
  for (int64_t v = 0; v < V; ++v)
    for (int64_t k = 0; k < 4; ++k) strengths[v * 4 + k] = f[v * (C + 16) + C + 4 + k];
  if (exact_tanh)
    exact_tanh_inplace(strengths, V * 4);
  else
    strengths_.tanh_();
  const auto tenth = static_cast<float>(0.1);
  for (int64_t i = 0; i < V * 4; ++i) strengths[i] = strengths[i] * tenth;
  // 4. coupling: tanh(content * plasticity[0]) (its argument made, and with the exact tanh the
  // tanh taken, by the diffusion's walk) ...
  // (with sixteen lanes the exact tanh is faster as a walk of its own than fused: exact_tanh.h)
  const bool wide_tanh = exact_tanh && exact_tanh_is_wide();
  learned_diffusion_fused(scratch_a_.data_ptr<float>(), strengths, R, f,
                          scratch_b_.data_ptr<float>(), scratch_act_.data_ptr<float>(),
                          exact_tanh && !wide_tanh);
  if (wide_tanh)
    exact_tanh_inplace(scratch_act_.data_ptr<float>(), scratch_act_.numel());
  else if (!exact_tanh)
    scratch_act_.tanh_();
  // ... its neighbour sum, then 6. the dynamics' self-modification, steered by the error field
  // once there is one (7. below)
  const bool steered = last_error_field_.defined();
  const EvolveTail tail = coupling_and_dynamics(
      scratch_b_.data_ptr<float>(), scratch_act_.data_ptr<float>(), f, R,
      self_modification_strength_, exploration,
      steered ? error_resource_terms_.data_ptr<float>() : nullptr,
      steered ? py_min(0.5, last_error_field_mean_abs_) : 0.0, evolved_.data_ptr<float>());
  // 7.
  update_self_modification_strength();
  torch::Tensor& evolved = evolved_;
  double max_val = tail.max_abs_content;
  if (tail.has_nan) {
    torch::Tensor nan_mask = torch::isnan(evolved);
    const int64_t n = nan_mask.sum().item<int64_t>();
    evolved.index_put_({nan_mask}, at::randn({n}, gen, torch::kFloat32) * 0.01);
    max_val = evolved.index({"...", Slice(0, C)}).abs().max().item<double>();
  }
  if (max_val > 2.0) {
    // in place: ATen walks the strided view row by row of 48, as it walks it out of place
    // (each value's tanh is the same whichever walk: the exact tanh is lanewise)
    if (exact_tanh_available() && C % 8 == 0) {
      exact_tanh_rows_inplace(evolved.data_ptr<float>(), V, C + 16, C);
    } else {
      torch::Tensor c = evolved.index({"...", Slice(0, C)});
      c.tanh_();
    }
  }
  // (the dynamics were clamped to [-5, 5] in the loop; a NaN replaced above is randn * 0.01)
  evolution_count_ += 1;
  return evolved_;
}

// EvolvedFieldDynamics.compute_field_state (information_history is appended and never read:
// not kept)
// mean(|content|) and var(content) summed in ATen's orders (aten_sums.h): the abs is a fresh
// contiguous tensor summed as one row; var is ATen's whole-tensor path on the strided view.
FieldState FieldDynamicsImpl::compute_field_state(const torch::Tensor& field_in) {
  const torch::Tensor field = field_in.contiguous();
  const int64_t C = field.size(-1), V = field.numel() / C;
  const float* f = field.data_ptr<float>();
  FieldState s;
  const ContentSums sums = content_abs_sum_and_var(f, V, C, content_features_);
  s.raw_information = sums.abs_sum / static_cast<float>(V * content_features_);
  if (std::isnan(s.raw_information)) s.raw_information = 0.5;
  const float variance = sums.variance;
  s.variance = std::isnan(variance) ? 0.0 : variance;
  s.combined_information = s.raw_information * (1.0 + s.variance);
  smoothed_information_ = 0.95 * smoothed_information_ + 0.05 * s.combined_information;
  s.smoothed_information = smoothed_information_;
  return s;
}

// EvolvedFieldDynamics.compute_novelty
double FieldDynamicsImpl::compute_novelty(const torch::Tensor& field) {
  // content[:8, :8, :8, :8].flatten() at linspace's 512 positions (novelty_sample.h: a copy)
  const torch::Tensor& flat = novelty_sample_.take(field, content_features_);
  // a fresh tensor, kept as the snapshot below (the original's clone of it: the same values)
  torch::Tensor norm = flat / (torch::norm(flat) + 1e-8);
  const auto push = [&](int64_t ts) {
    pattern_memory_.push_back(norm);
    pattern_timestamps_.push_back(ts);
    const auto cap = static_cast<std::size_t>(options_.pattern_memory_size() * 2);
    if (pattern_memory_.size() > cap) pattern_memory_.pop_front(), pattern_timestamps_.pop_front();
  };
  if (pattern_memory_.empty()) {
    push(evolution_count_);
    last_novelty_ = 1.0;
    return 1.0;
  }
  double max_similarity = 0.0;
  const int64_t current_time = evolution_count_;
  // the dot products as torch::dot gives them, without an ATen call each where that is exact
  // (exact_dot.h; the snapshots are contiguous clones of `norm`'s length)
  const bool direct = exact_dot_available() && norm.scalar_type() == torch::kFloat32 &&
                      norm.is_contiguous() && norm.numel() > 0;
  const auto direct_for = [&](const torch::Tensor& memory) {
    return direct && memory.scalar_type() == torch::kFloat32 && memory.is_contiguous() &&
           memory.numel() == norm.numel();
  };
  const auto weight_of = [&](std::size_t i) {
    const int64_t age = current_time - pattern_timestamps_[i];
    return age < 1000 ? std::exp(static_cast<double>(-age) / 500) : -1.0;  // -1: too old
  };
  // The direct products are taken together first (exact_dots: eight side by side where that
  // is exact), then every similarity is folded in memory order, as the original does.
  dot_inputs_.clear();
  for (std::size_t i = 0; i < pattern_memory_.size(); ++i)
    if (weight_of(i) >= 0.0 && direct_for(pattern_memory_[i]))
      dot_inputs_.push_back(pattern_memory_[i].data_ptr<float>());
  dot_results_.resize(dot_inputs_.size());
  if (!dot_inputs_.empty())
    exact_dots(norm.data_ptr<float>(), dot_inputs_.data(), static_cast<int64_t>(dot_inputs_.size()),
               norm.numel(), dot_results_.data());
  std::size_t next_direct = 0;
  for (std::size_t i = 0; i < pattern_memory_.size(); ++i) {
    const double weight = weight_of(i);
    if (weight < 0.0) continue;
    const torch::Tensor& memory = pattern_memory_[i];
    const double dot = direct_for(memory) ? static_cast<double>(dot_results_[next_direct++])
                                          : torch::dot(norm, memory).item<double>();
    max_similarity = py_max(max_similarity, dot * weight);
  }
  const double temporal_bonus = 0.1 * std::sin(static_cast<double>(current_time) * 0.01);
  push(current_time);
  const double novelty = py_max(0.0, (1.0 - max_similarity) + temporal_bonus);
  last_novelty_ = novelty;
  return novelty;
}

// EvolvedFieldDynamics.update_confidence
void FieldDynamicsImpl::update_confidence(double prediction_error) {
  prediction_errors_.push_back(prediction_error);
  if (static_cast<int64_t>(prediction_errors_.size()) > options_.confidence_window())
    prediction_errors_.pop_front();
  double recent_error;
  const std::size_t n = prediction_errors_.size();
  if (n > 5) {
    recent_error = numpy_mean_range(prediction_errors_, tail_begin(prediction_errors_, 10), n);
    if (n > 20) {
      const double old_error = numpy_mean_range(prediction_errors_, n - 20, n - 10);
      error_improvement_history_.push_back(old_error - recent_error);
      if (error_improvement_history_.size() > 50) error_improvement_history_.pop_front();
      const std::size_t m = error_improvement_history_.size();
      if (m > 10) {
        const double recent_improvement = numpy_mean_range(error_improvement_history_, m - 10, m);
        if (std::abs(recent_improvement) < 0.001)
          learning_plateau_cycles_ += 1;
        else
          learning_plateau_cycles_ = 0;
      }
    }
  } else {
    recent_error = 0.5;
  }
  const double raw_confidence = 1.0 / (1.0 + recent_error * 5.0);
  smoothed_confidence_ = 0.9 * smoothed_confidence_ + 0.1 * raw_confidence;
}

// EvolvedFieldDynamics.compute_field_modulation
const FieldModulation& FieldDynamicsImpl::compute_field_modulation(const FieldState& state,
                                                                   bool has_sensory_input) {
  double information = state.smoothed_information;
  double novelty = last_novelty_;
  double confidence = smoothed_confidence_;
  if (std::isnan(information)) information = 0.5;
  if (std::isnan(confidence)) confidence = 0.5;
  if (std::isnan(novelty)) novelty = 0.0;
  if (!has_sensory_input)
    cycles_without_input_ += 1;
  else
    cycles_without_input_ = 0;
  const bool is_dreaming = cycles_without_input_ > 100;
  double norm_information = information / 1.5;
  norm_information =
      norm_information < 0.0 ? 0.0 : (norm_information > 1.0 ? 1.0 : norm_information);
  double internal_drive = (norm_information + confidence) / 2.0;
  if (is_dreaming) internal_drive = 0.95;
  const double base_exploration = (1.0 - norm_information) * (0.5 + 0.5 * novelty);
  const double improvement_pressure =
      py_min(0.5, static_cast<double>(learning_plateau_cycles_) / 200.0);
  double exploration_drive = base_exploration + improvement_pressure + 0.3;
  exploration_drive = py_min(1.0, exploration_drive);
  const double uncertainty_bonus = (1.0 - confidence) * 0.2;
  exploration_drive = py_min(1.0, exploration_drive + uncertainty_bonus);
  FieldModulation m;
  m.set = true;
  m.internal_drive = internal_drive;
  m.exploration_drive = exploration_drive;
  m.sensory_amplification = 1.0 + (1.0 - confidence) * 0.5;
  m.imprint_strength = 0.1 + 0.7 * (1.0 - internal_drive);
  m.motor_noise = exploration_drive * 0.5;
  m.decay_rate = 0.999 - 0.01 * norm_information;
  m.attention_novelty_bias = (1.0 - internal_drive) * 0.8;
  m.is_dreaming = is_dreaming;
  m.information = norm_information;
  m.confidence = confidence;
  m.novelty = novelty;
  modulation_ = m;
  return modulation_;
}

// EvolvedFieldDynamics.process_prediction_errors
void FieldDynamicsImpl::process_prediction_errors(
    const torch::Tensor& errors, const std::vector<const TopologyRegion*>& regions) {
  if (!error_learning_) error_learning_.emplace(options_.field_shape());
  const PredictionErrorLearning::ErrorField error = error_learning_->error_to_field(errors, regions);
  last_error_field_ = error.field;
  error_modulation_ = error_learning_->compute_learning_modulation(error);
  // mean|E| is what evolve_field's blend weight reads each cycle; the field does not change
  // until the next process_prediction_errors.
  last_error_field_mean_abs_ = error_modulation_.mean_error;
  PredictionErrorLearning::resource_terms(last_error_field_,
                                          static_cast<float>(error_modulation_.max_error),
                                          error_resource_terms_, resource_scratch_);
  // "exploration_boost" scales _last_novelty, which compute_novelty overwrites before any read
  last_novelty_ *= error_modulation_.exploration_boost;
}

void FieldDynamicsImpl::save(StateWriter& w, const std::string& part) const {
  w.tensor(part + ".wave_vectors", wave_vectors_);
  if (!pattern_memory_.empty())
    w.tensor(part + ".pattern_memory", torch::stack(std::vector<torch::Tensor>(
                                           pattern_memory_.begin(), pattern_memory_.end())));
  if (last_error_field_.defined()) w.tensor(part + ".last_error_field", last_error_field_);
  nlohmann::json m = {{"set", modulation_.set},
                      {"internal_drive", modulation_.internal_drive},
                      {"exploration_drive", modulation_.exploration_drive},
                      {"sensory_amplification", modulation_.sensory_amplification},
                      {"imprint_strength", modulation_.imprint_strength},
                      {"motor_noise", modulation_.motor_noise},
                      {"decay_rate", modulation_.decay_rate},
                      {"attention_novelty_bias", modulation_.attention_novelty_bias},
                      {"information", modulation_.information},
                      {"confidence", modulation_.confidence},
                      {"novelty", modulation_.novelty},
                      {"is_dreaming", modulation_.is_dreaming}};
  nlohmann::json em = {{"set", error_modulation_.set},
                       {"self_modification_boost", error_modulation_.self_modification_boost},
                       {"learning_rate", error_modulation_.learning_rate},
                       {"exploration_boost", error_modulation_.exploration_boost},
                       {"mean_error", error_modulation_.mean_error},
                       {"max_error", error_modulation_.max_error}};
  w.state[part] = {
      {"phase_offset", phase_offset_},
      {"self_modification_strength", self_modification_strength_},
      {"evolution_count", evolution_count_},
      {"pattern_timestamps",
       std::vector<int64_t>(pattern_timestamps_.begin(), pattern_timestamps_.end())},
      {"prediction_errors",
       std::vector<double>(prediction_errors_.begin(), prediction_errors_.end())},
      {"smoothed_confidence", smoothed_confidence_},
      {"error_improvement_history",
       std::vector<double>(error_improvement_history_.begin(), error_improvement_history_.end())},
      {"learning_plateau_cycles", learning_plateau_cycles_},
      {"smoothed_information", smoothed_information_},
      {"cycles_without_input", cycles_without_input_},
      {"last_novelty", last_novelty_},
      {"modulation", m},
      {"error_modulation", em},
      {"has_error_learning", error_learning_.has_value()},
      {"last_error_field_mean_abs", last_error_field_mean_abs_}};
  if (error_learning_) error_learning_->save(w, part + ".error_learning");
}

void FieldDynamicsImpl::load(const StateReader& r, const std::string& part) {
  const auto& j = r.at(part);
  torch::Tensor wv = r.tensor(part + ".wave_vectors", torch::kFloat32, wave_vectors_.sizes());
  auto ts = j.at("pattern_timestamps").get<std::vector<int64_t>>();
  std::deque<torch::Tensor> memory;
  if (!ts.empty()) {
    torch::Tensor m = r.tensor(part + ".pattern_memory");
    if (m.dim() != 2 || m.size(0) != static_cast<int64_t>(ts.size()))
      throw std::runtime_error("legacy state: novelty memory does not match its timestamps");
    for (int64_t i = 0; i < m.size(0); ++i) memory.push_back(m[i].clone());
  }
  torch::Tensor ef;
  if (r.has_tensor(part + ".last_error_field"))
    ef = r.tensor(part + ".last_error_field", torch::kFloat32,
                  torch::IntArrayRef(options_.field_shape()));
  std::optional<PredictionErrorLearning> pel;
  if (j.at("has_error_learning").get<bool>()) {
    pel.emplace(options_.field_shape());
    pel->load(r, part + ".error_learning");
  }
  const auto& jm = j.at("modulation");
  FieldModulation m;
  m.set = jm.at("set").get<bool>();
  m.internal_drive = jm.at("internal_drive").get<double>();
  m.exploration_drive = jm.at("exploration_drive").get<double>();
  m.sensory_amplification = jm.at("sensory_amplification").get<double>();
  m.imprint_strength = jm.at("imprint_strength").get<double>();
  m.motor_noise = jm.at("motor_noise").get<double>();
  m.decay_rate = jm.at("decay_rate").get<double>();
  m.attention_novelty_bias = jm.at("attention_novelty_bias").get<double>();
  m.information = jm.at("information").get<double>();
  m.confidence = jm.at("confidence").get<double>();
  m.novelty = jm.at("novelty").get<double>();
  m.is_dreaming = jm.at("is_dreaming").get<bool>();
  const auto& je = j.at("error_modulation");
  LearningModulation em;
  em.set = je.at("set").get<bool>();
  em.self_modification_boost = je.at("self_modification_boost").get<double>();
  em.learning_rate = je.at("learning_rate").get<double>();
  em.exploration_boost = je.at("exploration_boost").get<double>();
  em.mean_error = je.at("mean_error").get<double>();
  em.max_error = je.at("max_error").get<double>();
  auto pe = j.at("prediction_errors").get<std::vector<double>>();
  auto eih = j.at("error_improvement_history").get<std::vector<double>>();
  // everything parsed: commit
  wave_vectors_.copy_(wv);
  pattern_memory_ = std::move(memory);
  pattern_timestamps_.assign(ts.begin(), ts.end());
  last_error_field_ = ef;
  error_resource_terms_ = torch::Tensor();
  if (ef.defined())
    PredictionErrorLearning::resource_terms(ef, torch::max(torch::abs(ef)).item<float>(),
                                            error_resource_terms_, resource_scratch_);
  error_learning_ = std::move(pel);
  modulation_ = m;
  error_modulation_ = em;
  prediction_errors_.assign(pe.begin(), pe.end());
  error_improvement_history_.assign(eih.begin(), eih.end());
  phase_offset_ = j.at("phase_offset").get<double>();
  self_modification_strength_ = j.at("self_modification_strength").get<double>();
  evolution_count_ = j.at("evolution_count").get<int64_t>();
  smoothed_confidence_ = j.at("smoothed_confidence").get<double>();
  learning_plateau_cycles_ = j.at("learning_plateau_cycles").get<int64_t>();
  smoothed_information_ = j.at("smoothed_information").get<double>();
  cycles_without_input_ = j.at("cycles_without_input").get<int64_t>();
  last_novelty_ = j.at("last_novelty").get<double>();
  last_error_field_mean_abs_ = j.at("last_error_field_mean_abs").get<double>();
}

}  // namespace fieldbrain::legacy
