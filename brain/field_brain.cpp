#include "brain/field_brain.h"

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "brain/cycle.h"
#include "brain/cycle_context.h"
#include "brain/field_brain_parts.h"
#include "brain/host_input.h"
#include "brain/ops/field_readout.h"
#include "brain/ops/field_step.h"
#include "brain/ops/philox.h"
#include "brain/persistence.h"
#include "brain/robot_rows.h"
#include "brain/sync_counter.h"

namespace fieldbrain {

namespace {

// docs/cycle.md "Construction" 1: the initial field of one robot, [64,R,R,R] on the CPU.
torch::Tensor initial_field(uint64_t seed, int64_t R) {
  auto F = torch::empty({1, 64, R, R, R}, torch::kFloat);
  const auto key = torch::tensor({static_cast<int64_t>(seed), int64_t{0}}, torch::kLong).view({1, 2});
  ops::philox_normal_out(key, philox::kStreamInitialField, F);
  F = F[0];
  // Scale and shift per channel block (a mul then an add, each rounded to float32).
  const double scale[5] = {0.2, 0.1, 0.05, 0.05, 0.2};
  const double shift[5] = {0.05, 2.0, 0.0, 0.0, 0.0};
  const int64_t first[6] = {0, 48, 52, 56, 60, 64};
  for (int g = 0; g < 5; ++g) {
    auto block = F.slice(0, first[g], first[g + 1]);
    block.mul_(scale[g]);
    if (shift[g] != 0.0) block.add_(shift[g]);
  }
  return F;
}

}  // namespace

FieldBrainImpl::FieldBrainImpl(BrainConfig config, std::vector<uint64_t> robot_keys)
    : config_(std::move(config)), keys_(std::move(robot_keys)), device_(torch::kCPU) {
  config_.validate();
  if (keys_.empty()) throw std::invalid_argument("FieldBrain: no robot keys (batch of 0)");
  build(true);
}

FieldBrainImpl::FieldBrainImpl(BrainConfig config, std::vector<uint64_t> robot_keys, Scratch)
    : config_(std::move(config)), keys_(std::move(robot_keys)), device_(torch::kCPU) {
  build(false);
}

FieldBrainImpl::~FieldBrainImpl() = default;

void FieldBrainImpl::build(bool draw_initial_state) {
  if (config_.device != "cpu" && !torch::cuda::is_available()) {
    throw std::invalid_argument(
        fmt::format("brain config: device = \"{}\" but CUDA is not available", config_.device));
  }
  const BrainCycle which = config_.cycle();  // the one reading of the profile
  if (which == BrainCycle::Legacy) {
    throw std::invalid_argument("FieldBrain: \"profile\": \"legacy\" runs brain/legacy, not this brain");
  }
  device_ = torch::Device(config_.device);
  const int64_t B = static_cast<int64_t>(keys_.size());
  const int64_t S = config_.sensory_dim, M = config_.motor_dim, R = config_.resolution;
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  field_ = register_buffer("field", torch::zeros({B, 64, R, R, R}, opts));
  cycles_ = register_buffer("cycles", torch::zeros({B}, torch::kLong));
  telemetry_ = register_buffer("telemetry", torch::zeros({B, kTeleColumns}, opts));

  parts_ = std::make_unique<BrainParts>();
  BrainParts& p = *parts_;
  p.facts.allocate(B, S, device_, config_.attractor_capacity);
  for (const auto& t : p.facts.tensors()) register_scratch(t);  // rewritten every cycle
  // The config's cycle builds its variants of six modules (and its scratch); the brain
  // registers every module, in the save format's order and names.
  cycle_ = make_cycle(which, *this);
  p.hierarchy = register_module("hierarchy", p.hierarchy);
  p.error_field = register_module("error_field", p.error_field);
  p.imprint = register_module("imprint", p.imprint);
  p.modulation = register_module("modulation", p.modulation);
  p.attractors = register_module(
      "attractors",
      RewardAttractors(RewardAttractorsOptions(B, config_.attractor_capacity, R).device(device_)));
  p.dynamics = register_module("dynamics", p.dynamics);
  p.pooling = register_module("pooling", SpatialPooling(SpatialPoolingOptions(B).device(device_)));
  p.prediction = register_module("prediction", p.prediction);
  p.motors = register_module("motors", MotorGeneration(MotorGenerationOptions(B, M).device(device_)));
  p.echo = register_module("echo", MotorEcho(MotorEchoOptions(M, R).device(device_)));
  modules_ = brain_modules(*this);

  // The randomness state: (seed, cycle) per robot (docs/cycle.md "Randomness").
  auto key = torch::zeros({B, 2}, torch::kLong);
  for (int64_t b = 0; b < B; ++b) key[b][0] = static_cast<int64_t>(robot_seed(config_.seed, keys_[b]));
  noise_key_ = register_buffer("noise_key", key.to(device_));
  // One row, broadcast over the robots: it must not have the robot on dimension 0, so that
  // BrainGroup's row views (which narrow every per-robot tensor) leave it whole.
  key_step_ = torch::zeros({1, 2}, torch::kLong);
  key_step_.select(1, 1).fill_(1);
  key_step_ = key_step_.to(device_);
  check_robot_rows(*this, B);  // every buffer registered: the rule BrainGroup's row views rely on
  if (!draw_initial_state) return;

  // docs/cycle.md "Construction": pure functions of the robot's seed (cycle 0).
  torch::NoGradGuard no_grad;
  for (int64_t b = 0; b < B; ++b) {
    const uint64_t seed = robot_seed(config_.seed, keys_[b]);
    field_[b].copy_(initial_field(seed, R));
    p.dynamics->init_robot(b, seed);
    p.hierarchy->init_robot(b, seed);
  }
}

torch::Tensor FieldBrainImpl::step(const torch::Tensor& sensors, const torch::Tensor& reward) {
  auto motors = torch::empty({batch(), config_.motor_dim}, torch::kFloat);
  step_into(sensors, reward, motors);
  return motors;
}

void FieldBrainImpl::step_into(const torch::Tensor& sensors, const torch::Tensor& reward,
                               torch::Tensor& motors) {
  const int64_t B = batch();
  const auto s = host_input("FieldBrain::step", sensors, "sensors", {B, config_.sensory_dim});
  const auto r = host_input("FieldBrain::step", reward, "reward", {B});
  if (!motors.defined() || !motors.device().is_cpu() || motors.scalar_type() != torch::kFloat ||
      !motors.is_contiguous() || motors.sizes() != torch::IntArrayRef({B, config_.motor_dim})) {
    throw std::invalid_argument(fmt::format(
        "FieldBrain::step_into: motors must be a contiguous float32 CPU tensor [{}, {}]", B,
        config_.motor_dim));
  }
  run_cycle(s, r, motors);
}

void FieldBrainImpl::run_cycle(const torch::Tensor& sensors, const torch::Tensor& reward,
                               torch::Tensor& motors_out) {
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  stages_.start();
  const int64_t B = batch(), S = config_.sensory_dim;
  BrainParts& p = *parts_;

  // Host-known facts of the cycle, written into the static fact tables (brain/cycle_facts.h);
  // each cycle adds its own (the attractor slot) before uploading them.
  CycleContext ctx;
  ctx.batch = B;
  const float* s = sensors.data_ptr<float>();
  const float* r = reward.data_ptr<float>();
  const int64_t* n = cycles_.data_ptr<int64_t>();
  ctx.cycle.resize(B);
  ctx.scored.resize(B);
  ctx.has_input.resize(B);
  ctx.skip_imprint.resize(B);
  ctx.reward.resize(B);
  std::copy(s, s + B * S, p.facts.sensors_host.data_ptr<float>());
  for (int64_t b = 0; b < B; ++b) {
    float peak = 0.0f;
    for (int64_t j = 0; j < S; ++j) peak = std::max(peak, std::fabs(s[b * S + j]));
    const bool has_input = peak > 0.01f;
    ctx.cycle[b] = n[b];
    ctx.scored[b] = n[b] >= 1;
    ctx.has_input[b] = has_input;
    ctx.skip_imprint[b] = !has_input;
    ctx.reward[b] = r[b];
    int64_t* f = p.facts.row(b);
    f[kFactCycle] = n[b];
    f[kFactHasInput] = has_input ? 1 : 0;
    for (const BrainModule* m : modules_) m->write_facts(b, f);  // their rings' counts
    float* v = p.facts.values_row(b);
    v[kValueCycle] = static_cast<float>(n[b]);
    v[kValueScored] = n[b] >= 1 ? 1.0f : 0.0f;
    v[kValueReward] = r[b];
    v[kValuePhase] = static_cast<float>(0.1 * static_cast<double>(n[b]));
  }
  ctx.facts = p.facts.device;
  ctx.value_facts = p.facts.values;
  ctx.sensors = p.facts.sensors;
  ctx.n = p.facts.values.select(1, kValueCycle);
  ctx.scored_f = p.facts.values.select(1, kValueScored);
  ctx.reward_d = p.facts.values.select(1, kValueReward);
  ctx.phase = p.facts.values.select(1, kValuePhase);

  // Steps 1-11 (docs/cycle.md): the config's cycle, chosen once in build().
  cycle_->run(ctx);

  // 12. Finish: the host counter, then the cycle's one device->host copy.
  int64_t* completed = cycles_.data_ptr<int64_t>();  // a host counter: no tensor op
  for (int64_t b = 0; b < B; ++b) completed[b] += 1;
  SyncCounter::copy_to_host(parts_->motors->motor, motors_out);
  stages_.mark("finish");
  last_cycle_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int64_t FieldBrainImpl::cycle_graph_replays() const { return cycle_ ? cycle_->graph_replays() : 0; }
int64_t FieldBrainImpl::batch() const { return static_cast<int64_t>(keys_.size()); }
int64_t FieldBrainImpl::cycle() const { return cycles_.data_ptr<int64_t>()[0]; }
const BrainConfig& FieldBrainImpl::config() const { return config_; }
const torch::Tensor& FieldBrainImpl::field() const { return field_; }
const std::vector<uint64_t>& FieldBrainImpl::robot_keys() const { return keys_; }

}  // namespace fieldbrain
