#include "app/server/engine/torch_brain_engine.h"

#include <ATen/Parallel.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "app/server/engine/legacy_brain_engine.h"
#include "app/server/worker/state_files.h"
#include "brain/brain_config.h"
#include "brain/brain_group.h"
#include "brain/field_brain.h"
#include "brain/host_input.h"
#include "brain/ops/caching_allocator.h"

namespace fieldbrain::server {
namespace {

// An older save (brain archive version 1 or 2) was migrated on load: say so once per load.
// (Version 3 differs from 4 only by the meta "profile": nothing to say.)
void note_migration(int loaded_version, int64_t cycle, const std::string& path) {
  if (loaded_version < 3) {
    spdlog::warn("{}: brain save version {} migrated to {}: its mt19937 generator states were "
                 "dropped, the noise continues on the Philox streams from cycle {}",
                 path, loaded_version, FieldBrainImpl::kArchiveVersion, cycle);
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
    BrainGroupImpl& group = group_for(sensory_dim, motor_dim);
    return seat(group, group.claim(robot_key_hash(robot_key)));
  }

  void destroy(Slot slot) override {
    const auto it = seats_.find(slot);
    if (it == seats_.end()) return;
    const Seat s = it->second;
    seats_.erase(it);
    BrainGroupImpl& group = *groups_.at(s.sizes);
    group.release(s.row);
    if (group.size() == 0) {  // its memory goes with its last robot
      groups_.erase(s.sizes);
      motors_.erase(s.sizes);
    }
  }

  void step_group_into(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                       const std::vector<float>& rewards, std::vector<float>& motors) override {
    torch::NoGradGuard no_grad;
    if (slots.empty()) throw std::invalid_argument("step_group: no robots");
    const auto k = static_cast<int64_t>(slots.size());
    const Seat& first = seat_of(slots.front());
    BrainGroupImpl& group = *groups_.at(first.sizes);
    rows_.clear();  // capacity kept: no allocation once it has held the largest group
    for (Slot s : slots) {
      const Seat& seat = seat_of(s);
      if (seat.sizes != first.sizes) throw std::invalid_argument("step_group: robots of different sizes");
      rows_.push_back(seat.row);
    }
    const int64_t S = group.config().sensory_dim, M = group.config().motor_dim;
    if (static_cast<int64_t>(sensors.size()) != k * S || static_cast<int64_t>(rewards.size()) != k) {
      throw std::invalid_argument("sensor batch size does not match the group");
    }
    // The group copies the inputs into its own rows: the vectors are only read.
    const auto x = torch::from_blob(const_cast<float*>(sensors.data()), {k, S}, torch::kFloat32);
    const auto r = torch::from_blob(const_cast<float*>(rewards.data()), {k}, torch::kFloat32);
    // One motors buffer per group, grown only when more of its robots step at once: a steady
    // tick creates no tensor (test/server/engine_tick_allocation_brain_test.cpp).
    torch::Tensor& buffer = motors_[first.sizes];
    if (!buffer.defined() || buffer.size(0) < k) buffer = torch::empty({k, M}, torch::kFloat32);
    torch::Tensor out = buffer.narrow(0, 0, k);
    group.step_into(rows_, x, r, out);
    const float* m = out.data_ptr<float>();
    motors.assign(m, m + k * M);
  }

  // The brain refuses larger inputs itself (brain/host_input.h); the session refuses them
  // first, with a clear error to the robot.
  InputLimits input_limits() const override { return {kMaxInputMagnitude, kMaxInputMagnitude}; }

  int64_t cycle(Slot slot) const override {
    const Seat& s = seat_of(slot);
    return groups_.at(s.sizes)->cycle(s.row);
  }

  void save(Slot slot, const std::string& path) override {
    torch::NoGradGuard no_grad;
    const Seat& s = seat_of(slot);
    groups_.at(s.sizes)->save(s.row, path);
  }

  void load(Slot slot, const std::string& path) override {
    torch::NoGradGuard no_grad;
    const Seat& s = seat_of(slot);
    BrainGroupImpl& group = *groups_.at(s.sizes);
    note_migration(group.load(s.row, path), group.cycle(s.row), path);
  }

  // A whole single-robot FieldBrain of its own, built and loaded on the calling thread: nothing
  // is shared with the groups being stepped (the allocator pool is thread-safe).
  std::unique_ptr<Detached> load_detached(const std::string& robot_key, int sensory_dim,
                                          int motor_dim, const std::string& path) override {
    torch::NoGradGuard no_grad;
    FieldBrain b(config_for(sensory_dim, motor_dim), std::vector<uint64_t>{robot_key_hash(robot_key)});
    b->load(path);
    note_migration(b->loaded_archive_version(), b->cycle(), path);
    return std::make_unique<DetachedFieldBrain>(std::move(b));
  }

  // The loaded brain's state is copied into a row of its group once; the brain is dropped.
  Slot adopt(std::unique_ptr<Detached> detached) override {
    auto* d = dynamic_cast<DetachedFieldBrain*>(detached.get());
    if (!d) throw std::invalid_argument("adopt: not a brain of this engine");
    torch::NoGradGuard no_grad;
    const BrainConfig& c = d->brain->config();
    BrainGroupImpl& group = group_for(static_cast<int>(c.sensory_dim), static_cast<int>(c.motor_dim));
    return seat(group, group.claim(*d->brain));
  }

  // A host copy of the row's state now (a memcpy-class cost: ~10 MB at R = 32 plus 8 MiB per
  // live attractor slot); digest, serialisation and fsync run on the writer thread while the
  // robot keeps cycling.
  StateWriterFn snapshot(Slot slot) override {
    torch::NoGradGuard no_grad;
    const Seat& s = seat_of(slot);
    auto contents = std::make_shared<const ArchiveContents>(groups_.at(s.sizes)->archive_contents(s.row));
    return [contents](const std::string& path) { contents->save(path); };
  }

  nlohmann::json telemetry(Slot slot) override {
    torch::NoGradGuard no_grad;
    const Seat& s = seat_of(slot);
    return groups_.at(s.sizes)->telemetry(s.row);
  }

  nlohmann::json field_slice(Slot slot, int64_t channel, int64_t z) override {
    torch::NoGradGuard no_grad;
    const int64_t R = base_.resolution;
    if (channel < 0 || channel >= 64) throw std::invalid_argument("channel must be in 0..63");
    if (z < 0 || z >= R) {
      throw std::invalid_argument("z must be in 0.." + std::to_string(R - 1));
    }
    const Seat& s = seat_of(slot);
    torch::Tensor plane = groups_.at(s.sizes)->field_slice(s.row, channel, z).to(torch::kCPU).contiguous();
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
    return {{"profile", to_string(base_.profile)},
            {"resolution", R},
            {"field_shape", {R, R, R, 64}},
            {"device", base_.device},
            {"field_step", base_.field_step},
            {"attractor_capacity", base_.attractor_capacity}};
  }

  bool on_gpu() const override { return base_.device.rfind("cuda", 0) == 0; }
  std::string state_extension() const override { return ".pt"; }

 private:
  using Sizes = std::pair<int, int>;  // (S, M): the robots of one group
  struct Seat {
    Sizes sizes;
    BrainGroupImpl::Row row;
  };

  BrainConfig config_for(int sensory_dim, int motor_dim) const {
    BrainConfig c = base_;
    c.sensory_dim = sensory_dim;
    c.motor_dim = motor_dim;
    c.validate();
    return c;
  }
  BrainGroupImpl& group_for(int sensory_dim, int motor_dim) {
    const Sizes sizes{sensory_dim, motor_dim};
    auto it = groups_.find(sizes);
    if (it == groups_.end()) it = groups_.emplace(sizes, BrainGroup(config_for(sensory_dim, motor_dim))).first;
    return *it->second;
  }
  Slot seat(const BrainGroupImpl& group, BrainGroupImpl::Row row) {
    const Slot slot = next_slot_++;
    seats_.emplace(slot, Seat{{static_cast<int>(group.config().sensory_dim),
                               static_cast<int>(group.config().motor_dim)},
                              row});
    return slot;
  }
  const Seat& seat_of(Slot slot) const {
    auto it = seats_.find(slot);
    if (it == seats_.end()) throw std::out_of_range("no brain in slot " + std::to_string(slot));
    return it->second;
  }

  BrainConfig base_;
  std::map<Sizes, BrainGroup> groups_;  // one resident group per (S, M)
  std::map<Sizes, torch::Tensor> motors_;  // per group: its motors buffer [most robots stepped, M]
  std::vector<BrainGroupImpl::Row> rows_;  // the rows of the tick being stepped (reused)
  std::map<Slot, Seat> seats_;
  Slot next_slot_ = 1;
};

}  // namespace

std::unique_ptr<BrainEngine> make_field_brain_engine(const nlohmann::json& brain_config) {
  BrainConfig c = brain_config.get<BrainConfig>();
  // The one place a profile is chosen: each has its own engine.
  if (c.profile == BrainProfile::Legacy) return make_legacy_brain_engine(c);
  return std::make_unique<FieldBrainEngine>(std::move(c));
}

}  // namespace fieldbrain::server
