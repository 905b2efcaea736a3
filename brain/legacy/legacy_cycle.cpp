#include "brain/legacy/legacy_cycle.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "brain/legacy/exact_block_sums.h"
#include "brain/legacy/field_blob_writes.h"
#include "brain/legacy/field_stencils.h"
#include "brain/legacy/motor_generation.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

namespace {
std::vector<int64_t> field_shape(int64_t R) { return {R, R, R, 64}; }

// utils/tensor_ops.create_randn(shape, scale=0.2, bias=0.05)
torch::Tensor initial_field(int64_t R, at::Generator& gen) {
  return at::randn({R, R, R, 64}, gen, torch::kFloat32) * 0.2 + 0.05;
}
}  // namespace

// UnifiedFieldBrain.__init__ / _initialize_core_systems, then the factory's
// enable_hierarchical_prediction / enable_strategic_planning / enable_active_vision (none draws).
LegacyCycle::LegacyCycle(int64_t sensory_dim, int64_t motor_dim, int64_t resolution,
                         int64_t n_waves, at::Generator gen, LegacyPlanner planner)
    : S_(sensory_dim),
      M_(motor_dim),
      R_(resolution),
      gen_(std::move(gen)),
      field_(initial_field(resolution, gen_)),
      dynamics_(FieldDynamicsOptions(field_shape(resolution)), n_waves, gen_),
      shaper_(20, 0.95),
      topology_(field_shape(resolution), 0.05, 200),
      mapping_(field_shape(resolution), 0.3, 0.95),
      predictive_((dynamics_->initialize_field_dynamics(field_, gen_), field_shape(resolution)),
                  sensory_dim, gen_),
      discovery_(make_pattern_discovery(planner, resolution)) {}

std::vector<TopologyRegion*> LegacyCycle::last_activated_objects() {
  std::vector<TopologyRegion*> out;
  for (const auto& id : last_activated_)
    out.push_back(last_activated_are_ids_ ? nullptr : topology_.find(id));
  return out;
}

// UnifiedFieldBrain._imprint_experience
void LegacyCycle::imprint_experience(const torch::Tensor& raw, double field_intensity) {
  // torch.max(torch.abs(raw)) > 0.01 (a max is the same float in any order; a NaN wins)
  bool above = false, nan = false;
  const float* rv = raw.data_ptr<float>();
  for (int64_t i = 0; i < raw.numel(); ++i) {
    above = above || std::fabs(rv[i]) > 0.01f;
    nan = nan || std::isnan(rv[i]);
  }
  const bool has_input = above && !nan;
  if (!has_input) return;
  const FieldModulation& mod = dynamics_->modulation();
  double scaled = field_intensity * (mod.set ? mod.imprint_strength : 0.5);
  scaled *= mod.set ? mod.sensory_amplification : 1.0;
  const double surprise = 1.0 - prediction_confidence_;
  const LearningModulation& em = dynamics_->error_modulation();
  if (em.set)
    scaled *= em.learning_rate / 0.1;
  else
    scaled *= 0.1 + (1.0 - 0.1) * surprise;
  const Location loc = mapping_.find_imprint_location(raw, field_, gen_);
  last_imprint_strategy_ = mapping_.last_strategy();
  const int64_t x = loc[0], y = loc[1], z = loc[2], size = 2;
  const int64_t x0 = std::max<int64_t>(0, x - size), x1 = std::min(R_, x + size + 1);
  const int64_t y0 = std::max<int64_t>(0, y - size), y1 = std::min(R_, y + size + 1);
  const int64_t z0 = std::max<int64_t>(0, z - size), z1 = std::min(R_, z + size + 1);
  float* f = field_.data_ptr<float>();
  for (int64_t dx = x0 - x; dx < x1 - x; ++dx)
    for (int64_t dy = y0 - y; dy < y1 - y; ++dy)
      for (int64_t dz = z0 - z; dz < z1 - z; ++dz) {
        const int distance = static_cast<int>(std::abs(dx) + std::abs(dy) + std::abs(dz));
        const auto add = static_cast<float>(scaled * python_pow(0.8, distance));
        float* v = f + (((x + dx) * R_ + (y + dy)) * R_ + (z + dz)) * 64;
        for (int c = 0; c < 64; ++c) v[c] = v[c] + add;
      }
  last_imprint_strength_ = scaled;
}

// UnifiedFieldBrain._evolve_field
void LegacyCycle::evolve_field() {
  // 1. the field's own dynamics (with spontaneous activity)
  const torch::Tensor& evolved = dynamics_->evolve_field(field_, gen_);
  // 2. tensor_ops.apply_diffusion(field, 0.05, dims=(0, 1, 2)): periodic, into the spare field
  // buffer (a fresh one while someone else holds the last one), which becomes the field
  if (!spare_field_.defined() || spare_field_.storage().use_count() > 1)
    spare_field_ = torch::empty({R_, R_, R_, 64}, torch::kFloat32);
  periodic_diffusion_into(evolved, spare_field_, 0.05);
  std::swap(field_, spare_field_);
  // 3. reward topology influence
  shaper_.apply_influence(field_);
  // 4. hierarchical prediction's pending update (zeros but its blobs: add the blobs)
  // (field[x0:x1, y0:y1, z0:z1, channel] += value each, as loops: field_blob_writes.h)
  add_field_blobs(field_, predictive_.take_pending_update());
  // 5. the strategic pattern, once one has arrived
  if (pattern_) apply_strategic_pattern();
  field_evolution_cycles_ += 1;
}

// _evolve_field step 5: the pattern blended into the memory channels, its energy into content
void LegacyCycle::apply_strategic_pattern() {
  torch::Tensor memory = field_.slice(3, 32, 48);
  memory.copy_(memory * 0.7 + pattern_->pattern * 0.3);
  torch::Tensor pattern_energy = field_.slice(3, 32, 48).mean(-1, true);
  torch::Tensor gradient_influence = at::tanh(pattern_energy) * 0.2;
  field_.slice(3, 0, 32).add_(gradient_influence.expand({-1, -1, -1, 32}));
}

// process_robot_cycle step 7. The tensions are measured only when they can decide (they draw
// nothing and change nothing); with the planner off no pattern ever arrives, so every cycle
// requests.
void LegacyCycle::strategic_discovery(double now_s) {
  const bool should_discover = !pattern_.has_value() || brain_cycles_ % 20 == 0 ||
                               prediction_confidence_ < 0.3 ||
                               measure_field_tensions(field_).total > 0.6;
  if (should_discover) {
    discovery_requests_ += 1;
    discovery_->request(field_, gen_, now_s);
  }
  // on_pattern_discovered: a pattern with a positive score becomes the current one
  std::optional<StrategicPattern> found = discovery_->take_finished();
  if (found && found->score > 0) pattern_ = std::move(found);
}

// UnifiedFieldBrain.process_robot_cycle
std::vector<double> LegacyCycle::process(const std::vector<double>& input, double now_s) {
  topology_.start_clock(now_s);
  const auto L = static_cast<int64_t>(input.size());
  input_length_ = L;
  // 1. _create_field_experience
  torch::Tensor raw = torch::empty({L}, torch::kFloat32);
  for (int64_t i = 0; i < L; ++i) raw.data_ptr<float>()[i] = static_cast<float>(input[i]);
  const double reward = L > S_ ? input.back() : 0.0;
  const double field_intensity = 0.5 + reward * 0.5;

  // 2. score last cycle's prediction
  if (predicted_sensory_.defined()) {
    torch::Tensor actual = L > S_ ? raw.index({Slice(0, S_)}) : raw;
    const int64_t n = std::min(actual.size(0), predicted_sensory_.size(0));
    torch::Tensor a = actual.size(0) == n ? actual : actual.index({Slice(0, n)});
    torch::Tensor p = predicted_sensory_.size(0) == n ? predicted_sensory_
                                                      : predicted_sensory_.index({Slice(0, n)});
    last_prediction_error_ = a - p;
    const double sensory_error = exact_abs_mean(last_prediction_error_.data_ptr<float>(), n);
    const double model_complexity = py_min(1.0, static_cast<double>(topology_.size()) / 50.0);
    const double error_weight = 1.5 - 0.5 * model_complexity;
    const double base_confidence = brain_cycles_ < 50 ? 0.2 * (1.0 - model_complexity) : 0.0;
    const double raw_confidence =
        py_max(base_confidence, 1.0 - py_min(1.0, sensory_error * error_weight));
    const double momentum = 0.9 - py_min(0.2, static_cast<double>(brain_cycles_) / 1000.0);
    prediction_confidence_ = momentum * prediction_confidence_ + (1.0 - momentum) * raw_confidence;
    if (!last_activated_.empty()) {
      std::vector<TopologyRegion*> regions = last_activated_objects();
      predictive_.process_prediction_error(predicted_sensory_, actual, regions, field_);
      std::vector<const TopologyRegion*> const_regions(regions.begin(), regions.end());
      dynamics_->process_prediction_errors(last_prediction_error_, const_regions);
    }
  } else {
    prediction_confidence_ = 0.5;  // first cycle
  }

  // 3. imprint (4. attention has no effect: left out)
  imprint_experience(raw, field_intensity);

  // 5. field state, novelty, confidence, modulation
  const FieldState state = dynamics_->compute_field_state(field_);
  dynamics_->compute_novelty(field_);
  const double error_scalar =
      last_prediction_error_.defined()
          ? exact_abs_mean(last_prediction_error_.data_ptr<float>(), last_prediction_error_.numel())
          : std::abs(0.3);
  dynamics_->update_confidence(error_scalar);
  bool has_input = false;
  for (int64_t i = 0; i + 1 < L; ++i)
    if (std::abs(input[i]) > 0.01) {
      has_input = true;
      break;
    }
  dynamics_->compute_field_modulation(state, has_input);

  // 6. reward topology
  if (std::abs(reward) > 0.1) shaper_.process_reward(field_, reward);
  last_reward_signal_ = reward;

  // 7. strategic pattern discovery
  strategic_discovery(now_s);

  // 8. evolve
  evolve_field();
  // (_predicted_field is read only by a branch that never runs after cycle 0: left out)
  topology_.update_sensory_predictions(L - 1, now_s);
  std::vector<TopologyRegion*> regions = topology_.predictive_regions();
  SensoryPredictionResult prediction = predictive_.generate(field_, regions, recent_sensory_);
  predicted_sensory_ = prediction.values;
  temporal_basis_ = prediction.temporal_basis;
  last_activated_are_ids_ = false;
  last_activated_.clear();
  for (const TopologyRegion* r : regions) last_activated_.push_back(r->id);
  recent_sensory_.push_back(L > S_ ? std::vector<double>(input.begin(), input.end() - 1) : input);
  if (recent_sensory_.size() > 10) recent_sensory_.pop_front();

  // 8. motors
  std::vector<double> motor = generate_motor_action(
      field_, M_, dynamics_->modulation().set ? dynamics_->modulation().exploration_drive : 0.5,
      gen_, pattern_.has_value());

  // 9. topology regions every 5th cycle
  if (brain_cycles_ % 5 == 0) {
    last_activated_ = topology_.detect(field_, motor, now_s);
    last_activated_are_ids_ = true;
  }
  // 10. motor echo
  echo_motor_to_field(field_, motor);
  // 11.
  brain_cycles_ += 1;
  return motor;
}

// UnifiedFieldBrain._create_brain_state
nlohmann::json LegacyCycle::brain_state() const {
  const FieldModulation& mod = dynamics_->modulation();
  const double information = mod.set ? mod.information : 0.5;
  const double confidence = dynamics_->smoothed_confidence();
  std::string mode;
  if (information < 0.3)
    mode = "exploring";
  else if (information > 0.7 && dynamics_->cycles_without_input() > 50)
    mode = "dreaming";
  else if (confidence > 0.6)
    mode = "exploiting";
  else
    mode = "balanced";
  torch::Tensor a = field_.abs();
  const double field_information = a.mean().item<double>();
  return {{"profile", "legacy"},
          {"cycle", brain_cycles_},
          {"field_information", field_information},
          {"field_energy", field_information},
          {"max_activation", a.max().item<double>()},
          {"prediction_confidence", prediction_confidence_},
          {"memory_saturation",
           static_cast<double>(topology_.size()) / static_cast<double>(topology_.max_regions())},
          {"cognitive_mode", mode},
          {"information_state",
           {{"information", information},
            {"novelty", mod.set ? mod.novelty : 0.0},
            {"exploration_drive", mod.set ? mod.exploration_drive : 0.5}}},
          {"evolution_state",
           {{"self_modification_strength", dynamics_->self_modification_strength()},
            {"evolution_cycles", dynamics_->evolution_count()},
            {"smoothed_information", dynamics_->smoothed_information()},
            {"smoothed_confidence", confidence},
            {"cycles_without_input", dynamics_->cycles_without_input()}}},
          {"topology_shaping",
           {{"active_attractors", shaper_.active_attractors()},
            {"total_rewards", shaper_.total_rewards()}}},
          {"topology_regions", topology_.size()},
          {"topology_causal_links", topology_.causal_link_count()},
          {"activated_now", static_cast<int64_t>(last_activated_.size())},
          {"sensory_organization",
           {{"unique_patterns", mapping_.unique_patterns()},
            {"mapping_events", mapping_.mapping_events()},
            {"occupancy_ratio", mapping_.occupancy_ratio()}}},
          {"temporal_basis", temporal_basis_},
          {"last_imprint_strength", last_imprint_strength_},
          {"imprint_strategy", last_imprint_strategy_},
          {"planner",
           {{"mode", planner_mode_name(discovery_->mode())},
            {"discovery_requests", discovery_requests_},
            {"discoveries", discovery_->discoveries()},
            {"last_discovery_ms", discovery_->last_discovery_seconds() * 1000.0},
            {"pattern_active", pattern_.has_value()},
            {"pattern_score", pattern_ ? nlohmann::json(pattern_->score) : nlohmann::json()},
            {"library_size", static_cast<int64_t>(discovery_->library().size())}}},
          {"tensor_shape", {R_, R_, R_, 64}},
          {"device", "cpu"}};
}

void LegacyCycle::save(StateWriter& w) const {
  w.tensor("field", field_);
  if (predicted_sensory_.defined()) w.tensor("predicted_sensory", predicted_sensory_);
  if (last_prediction_error_.defined()) w.tensor("last_prediction_error", last_prediction_error_);
  auto* cpu_gen = gen_.get<at::CPUGeneratorImpl>();
  {
    // an async planner's worker may be drawing from it
    std::lock_guard<std::mutex> lock(cpu_gen->mutex_);
    w.tensor("torch_generator_state", torch::Tensor(cpu_gen->get_state()));
  }
  nlohmann::json recent = nlohmann::json::array();
  for (const auto& v : recent_sensory_) recent.push_back(v);
  w.state["brain"] = {{"brain_cycles", brain_cycles_},
                      {"field_evolution_cycles", field_evolution_cycles_},
                      {"prediction_confidence", prediction_confidence_},
                      {"last_imprint_strength", last_imprint_strength_},
                      {"last_activated_are_ids", last_activated_are_ids_},
                      {"last_activated", last_activated_},
                      {"recent_sensory", recent},
                      {"last_reward_signal", last_reward_signal_},
                      {"temporal_basis", temporal_basis_},
                      {"discovery_requests", discovery_requests_},
                      {"last_imprint_strategy", last_imprint_strategy_},
                      {"input_length", input_length_}};
  save_patterns(w, "planner_library", discovery_->library());
  save_patterns(w, "planner_current",
                pattern_ ? std::vector<StrategicPattern>{*pattern_} : std::vector<StrategicPattern>{});
  dynamics_->save(w, "field_dynamics");
  shaper_.save(w, "reward_shaping");
  topology_.save(w, "topology");
  mapping_.save(w, "sensory_mapping");
  predictive_.save(w, "predictive_field");
}

void LegacyCycle::load(const StateReader& r) {
  const auto& j = r.at("brain");
  torch::Tensor field = r.tensor("field", torch::kFloat32, {R_, R_, R_, 64});
  torch::Tensor gen_state = r.tensor("torch_generator_state");
  auto* cpu_gen = gen_.get<at::CPUGeneratorImpl>();
  cpu_gen->set_state(*gen_state.unsafeGetTensorImpl());
  field_ = field;
  predicted_sensory_ =
      r.has_tensor("predicted_sensory") ? r.tensor("predicted_sensory") : torch::Tensor();
  last_prediction_error_ =
      r.has_tensor("last_prediction_error") ? r.tensor("last_prediction_error") : torch::Tensor();
  brain_cycles_ = j.at("brain_cycles").get<int64_t>();
  field_evolution_cycles_ = j.at("field_evolution_cycles").get<int64_t>();
  prediction_confidence_ = j.at("prediction_confidence").get<double>();
  last_imprint_strength_ = j.at("last_imprint_strength").get<double>();
  last_activated_are_ids_ = j.at("last_activated_are_ids").get<bool>();
  last_activated_ = j.at("last_activated").get<std::vector<std::string>>();
  recent_sensory_.clear();
  for (const auto& v : j.at("recent_sensory"))
    recent_sensory_.push_back(v.get<std::vector<double>>());
  last_reward_signal_ = j.at("last_reward_signal").get<double>();
  temporal_basis_ = j.at("temporal_basis").get<std::string>();
  discovery_requests_ = j.at("discovery_requests").get<int64_t>();
  last_imprint_strategy_ = j.at("last_imprint_strategy").get<int>();
  input_length_ = j.at("input_length").get<int64_t>();
  // saves from before the planner was ported have neither: no pattern, an empty library
  if (r.state.contains("planner_library"))
    discovery_->restore_library(load_patterns(r, "planner_library"));
  if (r.state.contains("planner_current")) {
    std::vector<StrategicPattern> current = load_patterns(r, "planner_current");
    if (!current.empty()) pattern_ = std::move(current.front());
  }
  dynamics_->load(r, "field_dynamics");
  shaper_.load(r, "reward_shaping");
  topology_.load(r, "topology");
  mapping_.load(r, "sensory_mapping");
  predictive_.load(r, "predictive_field");
}

}  // namespace fieldbrain::legacy
