#include "python/csrc/profile_brain.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "brain/field_brain.h"
#include "brain/legacy/legacy_profile.h"
#include "brain/saved_profile.h"
#include "brain/persistence.h"

namespace fieldbrain::python {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// CPU seconds of the calling thread: the bench compares this with Python's time.thread_time(),
// which other processes on a busy machine do not disturb the way they disturb wall time.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void check_reward(float reward) {
  if (!std::isfinite(reward)) {
    throw std::invalid_argument(fmt::format("reward is not finite ({})", reward));
  }
}

// The fieldbrain profile: a FieldBrain of one robot (batch 1), as the server's group row.
class FieldProfileBrain final : public ProfileBrain {
 public:
  FieldProfileBrain(BrainConfig config, uint64_t key)
      : brain_(std::move(config), std::vector<uint64_t>{key}),
        reward_(torch::zeros({1}, torch::kFloat32)) {}

  torch::Tensor step(const torch::Tensor& sensors, float reward) override {
    check_reward(reward);
    reward_.data_ptr<float>()[0] = reward;
    torch::NoGradGuard no_grad;
    return brain_->step(sensors.view({1, -1}), reward_).view({-1});
  }

  double time_native(const torch::Tensor& sensors, int64_t cycles) override {
    torch::NoGradGuard no_grad;
    const torch::Tensor x = sensors.view({1, -1});
    const double t0 = thread_seconds();
    for (int64_t i = 0; i < cycles; ++i) brain_->step(x, reward_);
    return thread_seconds() - t0;
  }

  nlohmann::json telemetry() override {
    torch::NoGradGuard no_grad;
    return brain_->telemetry(0);
  }
  torch::Tensor field() const override { return brain_->field().select(0, 0); }
  int64_t cycle() const override { return brain_->cycle(); }
  const BrainConfig& config() const override { return brain_->config(); }
  std::shared_ptr<torch::nn::Module> module() override { return brain_.ptr(); }

  void save(const std::string& path) const override { brain_->save(path); }
  void load(const std::string& path) override {
    torch::NoGradGuard no_grad;
    brain_->load(path);
  }

 private:
  FieldBrain brain_;
  torch::Tensor reward_;  // [1] CPU float32, refilled each cycle
};

// The legacy profile: em-brain's original cycle (brain/legacy), fed as the server's legacy
// engine feeds it (app/server/engine/legacy_brain_engine.cpp): the input list made by
// legacy_input_list, the clock of legacy_clock_seconds.
class LegacyProfileBrain final : public ProfileBrain {
 public:
  LegacyProfileBrain(BrainConfig config, legacy::LegacyOptions options)
      : config_(std::move(config)), brain_(options) {}

  torch::Tensor step(const torch::Tensor& sensors, float reward) override {
    check_reward(reward);
    torch::NoGradGuard no_grad;
    const torch::Tensor x = sensors.contiguous();
    const auto t0 = Clock::now();
    const std::vector<double> list =
        legacy_input_list(x.data_ptr<float>(), x.numel(), reward, config_.legacy.reward);
    const std::vector<double> out =
        brain_->step(list, legacy_clock_seconds(config_.legacy.clock, brain_->cycle()));
    cycle_ms_ = elapsed_ms(t0);
    torch::Tensor motors = torch::empty({static_cast<int64_t>(out.size())}, torch::kFloat32);
    float* m = motors.data_ptr<float>();
    for (size_t i = 0; i < out.size(); ++i) m[i] = static_cast<float>(out[i]);
    return motors;
  }

  double time_native(const torch::Tensor& sensors, int64_t cycles) override {
    const double t0 = thread_seconds();
    for (int64_t i = 0; i < cycles; ++i) step(sensors, 0.0f);
    return thread_seconds() - t0;
  }

  nlohmann::json telemetry() override {
    // The legacy engine's telemetry: the original's brain state plus what the profile decides.
    nlohmann::json t = brain_->brain_state();
    t["profile"] = to_string(BrainProfile::Legacy);
    t["legacy_clock"] = to_string(config_.legacy.clock);
    t["seed"] = static_cast<uint32_t>(brain_->options().seed);
    t["cycle_time_ms"] = cycle_ms_;
    return t;
  }
  torch::Tensor field() const override { return brain_->field(); }
  int64_t cycle() const override { return brain_->cycle(); }
  const BrainConfig& config() const override { return config_; }
  std::shared_ptr<torch::nn::Module> module() override { return legacy_module_tree(*brain_); }

  void save(const std::string& path) const override { brain_->save(path); }
  void load(const std::string& path) override {
    torch::NoGradGuard no_grad;
    brain_->load(path);
    config_.seed = brain_->options().seed;
  }

 private:
  BrainConfig config_;
  legacy::LegacyBrain brain_;
  double cycle_ms_ = 0.0;
};

// A JSON value of an archive's meta, or a std::runtime_error naming the file and the key.
const nlohmann::json& meta_value(const nlohmann::json& meta, const char* key,
                                 const std::string& path) {
  if (!meta.is_object() || !meta.contains(key)) {
    throw std::runtime_error(fmt::format("{}: the save's metadata has no \"{}\"", path, key));
  }
  return meta.at(key);
}

}  // namespace

std::unique_ptr<ProfileBrain> make_profile_brain(const BrainConfig& config,
                                                 const std::optional<std::string>& robot) {
  config.validate();
  if (config.profile == BrainProfile::Legacy) {
    // The server's seed for a named robot; the seed as given (the original's own) otherwise.
    const uint64_t seed =
        robot ? legacy_robot_seed(config.seed, robot_key_hash(*robot)) : config.seed;
    return std::make_unique<LegacyProfileBrain>(config, legacy_options(config, seed));
  }
  return std::make_unique<FieldProfileBrain>(config, robot ? robot_key_hash(*robot) : 0);
}

std::unique_ptr<ProfileBrain> load_profile_brain(const std::string& path,
                                                 const nlohmann::json& overrides) {
  const Archive archive = load_archive(path);  // refuses a damaged file, naming the problem
  const std::string profile = saved_profile(archive.meta);
  if (profile.empty()) {
    throw std::runtime_error(fmt::format("{}: not a brain save of either profile", path));
  }
  nlohmann::json config;
  std::vector<uint64_t> keys;
  try {
    if (profile == to_string(BrainProfile::Legacy)) {
      config = {{"profile", profile},
                {"sensory_dim", meta_value(archive.meta, "sensory_dim", path)},
                {"motor_dim", meta_value(archive.meta, "motor_dim", path)},
                {"resolution", meta_value(archive.meta, "resolution", path)},
                {"seed", meta_value(archive.meta, "seed", path)}};
    } else {
      config = meta_value(archive.meta, "config", path);
      keys = meta_value(archive.meta, "robot_keys", path).get<std::vector<uint64_t>>();
      if (keys.size() != 1) {
        throw std::runtime_error(fmt::format(
            "{}: a save of {} robots; fieldbrain.Brain holds one (BrainGroup.load for a group)",
            path, keys.size()));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: unreadable metadata ({})", path, e.what()));
  }
  for (const auto& [key, value] : overrides.items()) config[key] = value;
  const BrainConfig c = config.get<BrainConfig>();  // std::invalid_argument naming a bad key
  std::unique_ptr<ProfileBrain> brain;
  if (c.profile == BrainProfile::Legacy) {
    brain = std::make_unique<LegacyProfileBrain>(c, legacy_options(c, c.seed));
  } else {
    // A legacy save has no robot keys: the brain's load then refuses it by its profile.
    brain = std::make_unique<FieldProfileBrain>(c, keys.empty() ? 0 : keys.front());
  }
  brain->load(path);
  return brain;
}

}  // namespace fieldbrain::python
