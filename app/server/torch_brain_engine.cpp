#include "app/server/torch_brain_engine.h"

#include <ATen/Parallel.h>

#include <cstdlib>
#include <map>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "app/server/state_files.h"
#include "brain/brain_config.h"
#include "brain/field_brain.h"
#include "brain/ops/caching_allocator.h"

namespace fieldbrain::server {
namespace {

// An older save (brain archive version 1 or 2) was migrated on load: say so once per load.
void note_migration(const FieldBrainImpl& brain, const std::string& path) {
  if (brain.loaded_archive_version() < FieldBrainImpl::kArchiveVersion) {
    spdlog::warn("{}: brain save version {} migrated to {}: its mt19937 generator states were "
                 "dropped, the noise continues on the Philox streams from cycle {}",
                 path, brain.loaded_archive_version(), FieldBrainImpl::kArchiveVersion,
                 brain.cycle());
  }
}

struct DetachedFieldBrain final : BrainEngine::Detached {
  explicit DetachedFieldBrain(FieldBrain b) : brain(std::move(b)) {}
  FieldBrain brain;
};

class FieldBrainEngine final : public BrainEngine {
 public:
  explicit FieldBrainEngine(BrainConfig base) : base_(std::move(base)) {
    base_.validate();
    // Every tick creates the same tensors: serve them from a pool, so that steady-state ticks
    // make no malloc and fault in no fresh pages (brain/ops/caching_allocator.h).
    ops::CachingCpuAllocator::install();
    // One intra-op thread unless OMP_NUM_THREADS says otherwise: one per core was measured to
    // make cycles 5-40x slower on a 2-core machine with anything else running (the threads
    // wait on each other; README "Serving real robots"), and the server has a loader and a
    // writer thread beside the brain thread. Robots are parallel across ticks, not inside one.
    if (std::getenv("OMP_NUM_THREADS") == nullptr) at::set_num_threads(1);
  }

  Slot create(const std::string& robot_key, int sensory_dim, int motor_dim) override {
    torch::NoGradGuard no_grad;
    BrainConfig c = base_;
    c.sensory_dim = sensory_dim;
    c.motor_dim = motor_dim;
    c.validate();
    const Slot slot = next_slot_++;
    brains_.emplace(slot, FieldBrain(c, std::vector<uint64_t>{robot_key_hash(robot_key)}));
    return slot;
  }

  void destroy(Slot slot) override { brains_.erase(slot); }

  std::vector<float> step_group(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                                const std::vector<float>& rewards) override {
    torch::NoGradGuard no_grad;
    const int64_t k = static_cast<int64_t>(slots.size());
    std::vector<FieldBrainImpl*> group;
    group.reserve(k);
    for (Slot s : slots) group.push_back(brain(s).get());
    const int64_t S = group.front()->config().sensory_dim;
    if (static_cast<int64_t>(sensors.size()) != k * S) {
      throw std::invalid_argument("sensor batch size does not match the group");
    }
    // from_blob does not own the vectors; clone so the brain may keep what it likes.
    auto x = torch::from_blob(const_cast<float*>(sensors.data()), {k, S}, torch::kFloat32).clone();
    auto r = torch::from_blob(const_cast<float*>(rewards.data()), {k}, torch::kFloat32).clone();
    torch::Tensor motors =
        k == 1 ? group.front()->step(x, r) : FieldBrainImpl::step_group(group, x, r);
    motors = motors.to(torch::kCPU, torch::kFloat32).contiguous();
    return std::vector<float>(motors.data_ptr<float>(), motors.data_ptr<float>() + motors.numel());
  }

  int64_t cycle(Slot slot) const override { return brain(slot)->cycle(); }

  void save(Slot slot, const std::string& path) override {
    torch::NoGradGuard no_grad;
    brain(slot)->save(path);
  }

  void load(Slot slot, const std::string& path) override {
    torch::NoGradGuard no_grad;
    brain(slot)->load(path);
    note_migration(*brain(slot), path);
  }

  // A whole FieldBrain of its own, built and loaded on the calling thread: nothing is shared
  // with the brains being stepped (the allocator pool is thread-safe).
  std::unique_ptr<Detached> load_detached(const std::string& robot_key, int sensory_dim,
                                          int motor_dim, const std::string& path) override {
    torch::NoGradGuard no_grad;
    BrainConfig c = base_;
    c.sensory_dim = sensory_dim;
    c.motor_dim = motor_dim;
    c.validate();
    FieldBrain b(c, std::vector<uint64_t>{robot_key_hash(robot_key)});
    b->load(path);
    note_migration(*b, path);
    return std::make_unique<DetachedFieldBrain>(std::move(b));
  }

  Slot adopt(std::unique_ptr<Detached> detached) override {
    auto* d = dynamic_cast<DetachedFieldBrain*>(detached.get());
    if (!d) throw std::invalid_argument("adopt: not a brain of this engine");
    const Slot slot = next_slot_++;
    brains_.emplace(slot, std::move(d->brain));
    return slot;
  }

  // A host copy of the state now (a memcpy-class cost: ~10 MB at R = 32 plus 8 MiB per live
  // attractor slot); digest, serialisation and fsync run on the writer thread while the
  // robot keeps cycling.
  StateWriterFn snapshot(Slot slot) override {
    torch::NoGradGuard no_grad;
    auto contents = std::make_shared<const ArchiveContents>(brain(slot)->archive_contents());
    return [contents](const std::string& path) { contents->save(path); };
  }

  nlohmann::json telemetry(Slot slot) override {
    torch::NoGradGuard no_grad;
    return brain(slot)->telemetry(0);
  }

  nlohmann::json field_slice(Slot slot, int64_t channel, int64_t z) override {
    torch::NoGradGuard no_grad;
    const int64_t R = base_.resolution;
    if (channel < 0 || channel >= 64) throw std::invalid_argument("channel must be in 0..63");
    if (z < 0 || z >= R) {
      throw std::invalid_argument("z must be in 0.." + std::to_string(R - 1));
    }
    torch::Tensor plane = brain(slot)->field_slice(0, channel, z).to(torch::kCPU).contiguous();
    nlohmann::json rows = nlohmann::json::array();
    auto a = plane.accessor<float, 2>();
    for (int64_t i = 0; i < a.size(0); ++i) {
      std::vector<float> row(a.size(1));
      for (int64_t j = 0; j < a.size(1); ++j) row[j] = a[i][j];
      rows.push_back(row);
    }
    return {{"resolution", R}, {"channel", channel}, {"z", z}, {"values", rows}};
  }

  nlohmann::json describe() const override {
    const int64_t R = base_.resolution;
    return {{"resolution", R},
            {"field_shape", {R, R, R, 64}},
            {"device", base_.device},
            {"field_step", base_.field_step},
            {"attractor_capacity", base_.attractor_capacity}};
  }

  bool on_gpu() const override { return base_.device.rfind("cuda", 0) == 0; }
  std::string state_extension() const override { return ".pt"; }

 private:
  FieldBrain& brain(Slot slot) {
    auto it = brains_.find(slot);
    if (it == brains_.end()) throw std::out_of_range("no brain in slot " + std::to_string(slot));
    return it->second;
  }
  const FieldBrain& brain(Slot slot) const {
    return const_cast<FieldBrainEngine*>(this)->brain(slot);
  }

  BrainConfig base_;
  std::map<Slot, FieldBrain> brains_;
  Slot next_slot_ = 1;
};

}  // namespace

std::unique_ptr<BrainEngine> make_field_brain_engine(const nlohmann::json& brain_config) {
  BrainConfig c = brain_config.get<BrainConfig>();
  return std::make_unique<FieldBrainEngine>(std::move(c));
}

}  // namespace fieldbrain::server
