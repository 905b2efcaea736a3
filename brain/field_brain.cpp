#include "brain/field_brain.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "brain/persistence.h"
#include "brain/sync_counter.h"

namespace fieldbrain {

uint64_t robot_seed(uint64_t seed, uint64_t key) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (key + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return z & 0x7FFFFFFFFFFFFFFFULL;
}

struct FieldBrainImpl::Parts {};

FieldBrainImpl::FieldBrainImpl(BrainConfig config, std::vector<uint64_t> robot_keys)
    : config_(std::move(config)), keys_(std::move(robot_keys)), device_(torch::kCPU) {
  config_.validate();
  if (keys_.empty()) throw std::invalid_argument("FieldBrain: no robot keys (batch of 0)");
  device_ = torch::Device(config_.device);
  build(true);
}

FieldBrainImpl::FieldBrainImpl(BrainConfig config, std::vector<uint64_t> robot_keys, Scratch)
    : config_(std::move(config)), keys_(std::move(robot_keys)), device_(torch::Device(config_.device)) {
  build(false);
}

FieldBrainImpl::~FieldBrainImpl() = default;

void FieldBrainImpl::build(bool draw_initial_state) {
  const int64_t B = static_cast<int64_t>(keys_.size()), R = config_.resolution;
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(device_);
  field_ = register_buffer("field", torch::zeros({B, 64, R, R, R}, opts));
  cycles_ = register_buffer("cycles", torch::zeros({B}, torch::kLong));
  telemetry_ = register_buffer("telemetry", torch::zeros({B, 16}, opts));
  parts_ = std::make_unique<Parts>();
  for (int64_t b = 0; b < B; ++b) {
    generators_.push_back(at::detail::createCPUGenerator(robot_seed(config_.seed, keys_[b])));
  }
  (void)draw_initial_state;
}

torch::Tensor FieldBrainImpl::step(const torch::Tensor& sensors, const torch::Tensor& reward) {
  return run_cycle(sensors, reward);
}

torch::Tensor FieldBrainImpl::run_cycle(const torch::Tensor& sensors, const torch::Tensor& reward) {
  const int64_t B = batch();
  if (sensors.dim() != 2 || sensors.size(0) != B || sensors.size(1) != config_.sensory_dim) {
    throw std::invalid_argument(fmt::format("FieldBrain::step: sensors must be [{},{}]", B,
                                            config_.sensory_dim));
  }
  if (reward.dim() != 1 || reward.size(0) != B) {
    throw std::invalid_argument(fmt::format("FieldBrain::step: reward must be [{}]", B));
  }
  auto motors = torch::zeros({B, config_.motor_dim}, field_.options());
  cycles_ += 1;
  return SyncCounter::to_host(motors);
}

torch::Tensor FieldBrainImpl::step_group(const std::vector<FieldBrainImpl*>& brains,
                                         const torch::Tensor& sensors, const torch::Tensor& reward) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < brains.size(); ++i) {
    out.push_back(brains[i]->step(sensors.slice(0, i, i + 1), reward.slice(0, i, i + 1)));
  }
  return torch::cat(out);
}

int64_t FieldBrainImpl::batch() const { return static_cast<int64_t>(keys_.size()); }
int64_t FieldBrainImpl::cycle() const { return cycles_[0].item<int64_t>(); }
const BrainConfig& FieldBrainImpl::config() const { return config_; }
const torch::Tensor& FieldBrainImpl::field() const { return field_; }
const std::vector<uint64_t>& FieldBrainImpl::robot_keys() const { return keys_; }

nlohmann::json FieldBrainImpl::telemetry(int64_t robot) {
  return nlohmann::json{{"cycle", cycle()}, {"robot", robot}};
}

torch::Tensor FieldBrainImpl::field_slice(int64_t robot, int64_t channel, int64_t z) {
  return SyncCounter::to_host(field_[robot][channel].select(2, z));
}

void FieldBrainImpl::save(const std::string& path) const {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& item : named_buffers()) tensors[item.key()] = item.value().cpu();
  nlohmann::json meta;
  meta["config"] = config_;
  save_archive(path, tensors, meta);
}

void FieldBrainImpl::load(const std::string& path) {
  Archive a = load_archive(path);
  (void)a;
}

}  // namespace fieldbrain
