#include "app/server/engine/legacy_brain_engine.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include "app/server/engine/legacy_step_pool.h"
#include "app/server/worker/state_files.h"
#include "brain/legacy/exact_block_sums.h"
#include "brain/legacy/legacy_profile.h"
#include "brain/save_mismatch.h"
#include "brain/saved_profile.h"
#include "brain/persistence.h"

namespace fieldbrain::server {
namespace {

using legacy::LegacyBrain;
using legacy::LegacyOptions;

// Whether every value of the float field is finite: one pass over its memory, no temporaries
// (torch::isfinite(t).all() made field-sized temporaries: ~4 ms of an R = 32 tick on one
// thread, measured against the bare cycle with fieldbrain-bench's legacy and legacy_tick rows).
bool field_finite(const torch::Tensor& field) {
  TORCH_CHECK(field.scalar_type() == torch::kFloat32, "the legacy field is float32");
  const torch::Tensor c = field.contiguous();
  return legacy::all_finite(c.data_ptr<float>(), c.numel());
}

// A brain whose load failed: when the file holds another profile's save, say that (the
// brain's own message would only say what did not match); otherwise keep the brain's message.
[[noreturn]] void explain_load_failure(const std::string& path, const std::exception& e) {
  std::string profile;
  try {
    profile = saved_profile(load_archive(path).meta);
  } catch (const std::exception&) {
    // Not an archive at all: the brain's message says so.
  }
  if (!profile.empty() && profile != to_string(BrainProfile::Legacy)) {
    // Intact but another profile's: kept by the server, the robot refused (save_mismatch.h).
    throw SaveMismatch(fmt::format(
        "{}: a save of the \"{}\" profile; this server runs \"profile\": \"legacy\" and loads only "
        "legacy saves",
        path, profile), "profile", nlohmann::json(profile).dump(), "\"legacy\"");
  }
  if (const auto* mismatch = dynamic_cast<const SaveMismatch*>(&e)) throw *mismatch;
  throw std::runtime_error(e.what());
}

struct LegacyRobot {
  LegacyBrain brain;
  uint32_t seed = 0;
  double cycle_ms = 0;
};

struct DetachedLegacyBrain final : BrainEngine::Detached {
  explicit DetachedLegacyBrain(LegacyRobot r) : robot(std::move(r)) {}
  LegacyRobot robot;
};

class LegacyBrainEngine final : public BrainEngine {
 public:
  explicit LegacyBrainEngine(BrainConfig config) : config_(std::move(config)) {
    config_.validate();
    if (config_.profile != BrainProfile::Legacy) {
      throw std::invalid_argument("the legacy engine needs \"profile\": \"legacy\"");
    }
    // One intra-op thread (P5 of the profiling notes: the pinned original runs with one; two
    // move motors by ~3e-8) unless OMP_NUM_THREADS says otherwise.
    if (std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(1);
    // "legacy_threads": a tick's robots are stepped one per thread (legacy_step_pool.h), every
    // helper thread with this intra-op count, so each robot's numbers are its run alone's.
    pool_ = std::make_unique<LegacyStepPool>(legacy_step_threads(config_.legacy_threads),
                                             at::get_num_threads());
  }

  Slot create(const std::string& robot_key, int sensory_dim, int motor_dim) override {
    torch::NoGradGuard no_grad;
    return seat(build(robot_key, sensory_dim, motor_dim));
  }

  void destroy(Slot slot) override { robots_.erase(slot); }

  void step_group_into(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                       const std::vector<float>& rewards, std::vector<float>& motors) override {
    torch::NoGradGuard no_grad;
    if (slots.empty()) throw std::invalid_argument("step_group: no robots");
    const int64_t S = robot(slots.front()).brain->options().sensory_dim;
    const int64_t M = robot(slots.front()).brain->options().motor_dim;
    const auto k = static_cast<int64_t>(slots.size());
    if (static_cast<int64_t>(sensors.size()) != k * S ||
        static_cast<int64_t>(rewards.size()) != k) {
      throw std::invalid_argument("sensor batch size does not match the group");
    }
    for (Slot s : slots) {
      const LegacyOptions& o = robot(s).brain->options();
      if (o.sensory_dim != S || o.motor_dim != M) {
        throw std::invalid_argument("step_group: robots of different sizes");
      }
    }
    motors.assign(static_cast<size_t>(k * M), 0.0f);
    // The original has no batch: one process_robot_cycle per robot. Robots share nothing (each
    // its own generators and state), so they step in parallel, one per pool thread, each with
    // the numbers of its run alone. A robot whose input the original refuses (e.g. a value
    // outside [-10, 10]) keeps its state; the others still step, and the call then fails naming
    // the first such robot in the group's order (the interface has no per-robot failure: the
    // worker reports the error for the group).
    batch_.clear();
    for (Slot s : slots) batch_.push_back(&robot(s));
    if (has_duplicate(batch_)) throw std::invalid_argument("step_group: a robot twice in one group");
    if (errors_.size() < batch_.size()) errors_.resize(batch_.size());
    auto step_one = [&](int64_t i) {
      torch::NoGradGuard no_grad_here;  // grad mode is per thread
      errors_[static_cast<size_t>(i)].clear();
      step_robot(*batch_[static_cast<size_t>(i)], sensors.data() + i * S, S, rewards[i],
                 motors.data() + i * M, M, errors_[static_cast<size_t>(i)]);
    };
    pool_->run(k, step_one);
    for (int64_t i = 0; i < k; ++i) {
      const std::string& e = errors_[static_cast<size_t>(i)];
      if (!e.empty()) throw std::invalid_argument(fmt::format("robot {} of the group: {}", i, e));
    }
  }

  // The original's own bound (its validate_list_input refuses values outside [-10, 10]): the
  // session refuses them first, per robot, and the original's numbers are untouched for every
  // input it accepts. The reward reaches the original only when appended to the list.
  InputLimits input_limits() const override {
    InputLimits limits;
    limits.max_sensor = kLegacyInputBound;
    if (config_.legacy.reward == LegacyReward::Append) limits.max_reward = kLegacyInputBound;
    return limits;
  }

  int64_t cycle(Slot slot) const override { return robot(slot).brain->cycle(); }

  void save(Slot slot, const std::string& path) override {
    torch::NoGradGuard no_grad;
    robot(slot).brain->save(path);
  }

  void load(Slot slot, const std::string& path) override {
    torch::NoGradGuard no_grad;
    try {
      robot(slot).brain->load(path);
    } catch (const std::exception& e) {
      explain_load_failure(path, e);
    }
  }

  std::unique_ptr<Detached> load_detached(const std::string& robot_key, int sensory_dim,
                                          int motor_dim, const std::string& path) override {
    torch::NoGradGuard no_grad;
    LegacyRobot r = build(robot_key, sensory_dim, motor_dim);
    try {
      r.brain->load(path);
    } catch (const std::exception& e) {
      explain_load_failure(path, e);
    }
    return std::make_unique<DetachedLegacyBrain>(std::move(r));
  }

  Slot adopt(std::unique_ptr<Detached> detached) override {
    auto* d = dynamic_cast<DetachedLegacyBrain*>(detached.get());
    if (!d) throw std::invalid_argument("adopt: not a brain of this engine");
    return seat(std::move(d->robot));
  }

  // The brain's own save, written here into memory (a temporary file read back: the brain
  // writes archives only to paths) and landed at `path` atomically by the state writer. Unlike
  // the fieldbrain profile's snapshot the serialisation runs on the brain thread: ~8 MiB at
  // R = 32, one robot at a time.
  StateWriterFn snapshot(Slot slot) override {
    torch::NoGradGuard no_grad;
    static std::atomic<uint64_t> counter{0};
    const std::string tmp =
        (std::filesystem::temp_directory_path() /
         fmt::format("fieldbrain-legacy-snapshot-{}-{}.pt", ::getpid(), counter++))
            .string();
    std::string bytes;
    try {
      robot(slot).brain->save(tmp);
      std::ifstream in(tmp, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) throw std::runtime_error("cannot read back " + tmp);
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw;
    }
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    auto contents = std::make_shared<const std::string>(std::move(bytes));
    return [contents](const std::string& path) { write_file_atomically(path, *contents); };
  }

  nlohmann::json telemetry(Slot slot) override {
    torch::NoGradGuard no_grad;
    const LegacyRobot& r = robot(slot);
    nlohmann::json t = r.brain->brain_state();
    t["profile"] = to_string(BrainProfile::Legacy);
    t["legacy_clock"] = to_string(config_.legacy.clock);
    t["seed"] = r.seed;
    t["cycle_time_ms"] = r.cycle_ms;
    return t;
  }

  nlohmann::json field_slice(Slot slot, int64_t channel, int64_t z) override {
    torch::NoGradGuard no_grad;
    const int64_t R = config_.resolution;
    if (channel < 0 || channel >= 64) throw std::invalid_argument("channel must be in 0..63");
    if (z < 0 || z >= R) throw std::invalid_argument("z must be in 0.." + std::to_string(R - 1));
    // The original's field is [x, y, z, channel]: the plane is [x][y] as in the fieldbrain
    // profile's slices.
    const torch::Tensor plane =
        robot(slot).brain->field().select(3, channel).select(2, z).contiguous();
    auto a = plane.accessor<float, 2>();
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t i = 0; i < a.size(0); ++i) {
      std::vector<float> row(static_cast<size_t>(a.size(1)));
      for (int64_t j = 0; j < a.size(1); ++j) row[static_cast<size_t>(j)] = a[i][j];
      rows.push_back(row);
    }
    return {{"resolution", R}, {"channel", channel}, {"z", z}, {"values", rows}};
  }

  nlohmann::json describe() const override {
    const int64_t R = config_.resolution;
    nlohmann::json d = {{"profile", to_string(BrainProfile::Legacy)},
                        {"resolution", R},
                        {"field_shape", {R, R, R, 64}},
                        {"device", "cpu"}};
    legacy::write_legacy_keys(d, config_.legacy);
    return d;
  }

  bool on_gpu() const override { return false; }
  std::string state_extension() const override { return ".legacy.pt"; }

 private:
  // One robot's cycle (any pool thread): its motors into out[0..M), NaN when its state stopped
  // being finite; on a refused input its state is untouched and `error` says why.
  void step_robot(LegacyRobot& r, const float* sensors, int64_t S, float reward, float* out,
                  int64_t M, std::string& error) const {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const std::vector<double> list =
          legacy_input_list(sensors, S, reward, config_.legacy.reward);
      const std::vector<double> motors =
          r.brain->step(list, legacy_clock_seconds(config_.legacy.clock, r.brain->cycle()));
      // The original repairs NaN inside its field step but nothing guards the rest of its
      // state: a field or motors no longer finite make this robot's motors NaN, the engine's
      // signal that its brain must be replaced (brain_engine.h). One pass over the field.
      const bool finite =
          std::all_of(motors.begin(), motors.end(), [](double v) { return std::isfinite(v); }) &&
          field_finite(r.brain->field());
      for (int64_t j = 0; j < M; ++j) {
        out[j] = finite ? static_cast<float>(motors[static_cast<size_t>(j)])
                        : std::numeric_limits<float>::quiet_NaN();
      }
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {  // nothing may escape a pool thread
      error = "unknown exception";
    }
    r.cycle_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  // Two entries for one robot would step it on two threads at once.
  static bool has_duplicate(const std::vector<LegacyRobot*>& robots) {
    for (size_t i = 1; i < robots.size(); ++i) {
      if (std::find(robots.begin(), robots.begin() + static_cast<std::ptrdiff_t>(i), robots[i]) !=
          robots.begin() + static_cast<std::ptrdiff_t>(i)) {
        return true;
      }
    }
    return false;
  }

  LegacyRobot build(const std::string& robot_key, int sensory_dim, int motor_dim) const {
    BrainConfig sized = config_;
    sized.sensory_dim = sensory_dim;
    sized.motor_dim = motor_dim;
    sized.validate();
    const LegacyOptions o =
        legacy_options(sized, legacy_robot_seed(config_.seed, robot_key_hash(robot_key)));
    LegacyRobot r{LegacyBrain(o), static_cast<uint32_t>(o.seed), 0.0};
    return r;
  }
  Slot seat(LegacyRobot r) {
    const Slot slot = next_slot_++;
    robots_.emplace(slot, std::move(r));
    return slot;
  }
  LegacyRobot& robot(Slot slot) {
    auto it = robots_.find(slot);
    if (it == robots_.end()) throw std::out_of_range("no brain in slot " + std::to_string(slot));
    return it->second;
  }
  const LegacyRobot& robot(Slot slot) const {
    return const_cast<LegacyBrainEngine*>(this)->robot(slot);
  }

  BrainConfig config_;
  std::map<Slot, LegacyRobot> robots_;
  Slot next_slot_ = 1;
  std::unique_ptr<LegacyStepPool> pool_;
  // One tick's robots and their refusals, kept across ticks (a steady tick allocates none here).
  std::vector<LegacyRobot*> batch_;
  std::vector<std::string> errors_;
};

}  // namespace

std::unique_ptr<BrainEngine> make_legacy_brain_engine(const BrainConfig& config) {
  return std::make_unique<LegacyBrainEngine>(config);
}

}  // namespace fieldbrain::server
