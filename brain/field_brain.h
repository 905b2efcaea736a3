// FieldBrain: the whole v1 cycle (docs/cycle.md) for a batch of B robots sharing (S, M, R).
//
// Guarantees (see brain/INTERFACE.md):
//  - every piece of state is a registered buffer, pre-allocated on the configured device at
//    construction (host-side counters are CPU buffers); named_buffers() lists all of it;
//  - every buffer has the robot on dimension 0 (checked at construction, brain/robot_rows.h);
//  - a robot's trajectory depends only on (config, its key, its inputs): the same alone, in a
//    batch, or in a step_group;
//  - step() makes exactly one device->host copy (the motors, through SyncCounter);
//  - bad input throws std::invalid_argument before any state changes.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/brain_module.h"
#include "brain/cycle_graph.h"
#include "brain/persistence.h"
#include "brain/robot_seed.h"
#include "brain/stage_timer.h"

namespace fieldbrain {

class Cycle;
struct BrainParts;
struct CycleContext;

class FieldBrainImpl : public BrainModule {
 public:
  // A brain's batch is its robot keys: a BrainGroup sets them with each row view (its modules
  // are told the batch by RobotRows); nothing else to change here.
  void set_batch(int64_t) override {}
  // B = robot_keys.size() robots sharing (S, M, R); robot i's random numbers are the Philox
  // streams of seed robot_seed(config.seed, robot_keys[i]) (docs/cycle.md "Randomness"). Throws std::invalid_argument on a bad config.
  FieldBrainImpl(BrainConfig config, std::vector<uint64_t> robot_keys);
  ~FieldBrainImpl() override;

  // One cycle for the whole batch. sensors [B,S] and reward [B] float32, finite and within
  // +-kMaxInputMagnitude (brain/host_input.h; any device; copied to the brain's device).
  // Returns motors [B,M] float32 on the CPU, each in (-1,1), or all NaN for a robot whose
  // field stopped being finite in this cycle (its state is then unusable: the caller restores
  // it; docs/operating.md "A brain that stops being finite"). The only device->host copy of
  // the cycle. Throws std::invalid_argument naming the problem (shape, non-finite, out of
  // range) and leaves the state untouched.
  torch::Tensor step(const torch::Tensor& sensors, const torch::Tensor& reward);
  // The same cycle with the motors written into `motors`, a contiguous float32 CPU tensor
  // [B,M] the caller owns and reuses: on the fused cycle a steady cycle then creates no tensor.
  void step_into(const torch::Tensor& sensors, const torch::Tensor& reward, torch::Tensor& motors);

  // One batched cycle over several single-robot brains with the same config (the server's
  // tick): result identical to stepping each alone. motors [k,M] on the CPU.
  static torch::Tensor step_group(const std::vector<FieldBrainImpl*>& brains,
                                  const torch::Tensor& sensors, const torch::Tensor& reward);

  int64_t batch() const;
  int64_t cycle() const;                    // cycles completed (host counter, no sync)
  const BrainConfig& config() const;
  nlohmann::json telemetry(int64_t robot);  // legacy §9 metrics (one host copy)
  torch::Tensor field_slice(int64_t robot, int64_t channel, int64_t z);  // [R,R] CPU

  void save(const std::string& path) const;  // atomic, checksummed, torch.load-able
  // The state save() writes, copied to the host now; `.save(path)` writes it later from any
  // thread while this brain keeps stepping (the server's state writer).
  ArchiveContents archive_contents() const;
  void load(const std::string& path);        // throws std::runtime_error on corrupt/mismatch,
                                             // state untouched then
  // The brain archive version the last load() read (0: none). Versions 1 and 2 are migrated:
  // their generator states are dropped and the noise follows the version-3 Philox streams
  // from the saved cycle (docs/robots.md "Save versions"); callers log that. Version 3 is
  // version 4 without the meta "profile" and loads as the fieldbrain profile.
  int loaded_archive_version() const { return loaded_archive_version_; }
  static constexpr int kArchiveVersion = 4;  // the brain archive version save() writes

  // Host time per stage of the last cycle (brain/stage_timer.h); off unless turned on here.
  void set_stage_timing(bool on) { stages_.enable(on); }
  void count_stage_tensors(StageTimer::Counter counter) { stages_.count_with(counter); }
  const StageTimer& stage_times() const { return stages_; }

  // CUDA graph replays of the cycle so far (brain/cycle_graph.h; 0 on the CPU, on the
  // reference cycle, or with FIELDBRAIN_CUDA_GRAPH=0).
  int64_t cycle_graph_replays() const;

  // The field [B,64,R,R,R] on the brain's device (a view of the state; for tests and tools).
  const torch::Tensor& field() const;
  const std::vector<uint64_t>& robot_keys() const;

 private:
  friend class BrainGroupImpl;  // holds robots as rows of one brain (brain/brain_group.h)
  friend class Cycle;           // the config's cycle works on the brain's state (brain/cycle.h)
  struct Scratch {};
  FieldBrainImpl(BrainConfig config, std::vector<uint64_t> robot_keys, Scratch);
  void build(bool draw_initial_state);
  // The cycle on checked inputs; the motors go into `motors` (CPU float32 [B,M]). Fills the
  // host-known facts, runs the config's cycle, finishes.
  void run_cycle(const torch::Tensor& sensors, const torch::Tensor& reward, torch::Tensor& motors);

  BrainConfig config_;
  std::vector<BrainModule*> modules_;  // every module of the cycle (brain_modules), for host work
  std::vector<uint64_t> keys_;
  torch::Device device_;
  torch::Tensor field_;      // [B,64,R,R,R]
  torch::Tensor cycles_;     // [B] int64 CPU: cycles completed per robot
  // [B,2] int64 on the device: (Philox seed, cycle) per robot, the whole randomness state;
  // column 1 equals cycles_ and is advanced on the device at the end of each cycle.
  torch::Tensor noise_key_;
  torch::Tensor key_step_;  // [1,2] int64 (0, 1): added to every robot's noise_key_ each cycle
  torch::Tensor telemetry_;  // [B,K] device: this cycle's §9 scalars
  double last_cycle_ms_ = 0.0;
  int loaded_archive_version_ = 0;
  StageTimer stages_;
  std::unique_ptr<BrainParts> parts_;
  // The config's cycle (brain/cycle.h: ReferenceCycle or FusedCycle), chosen once by build():
  // it owns its variants of the modules and its scratch.
  std::unique_ptr<Cycle> cycle_;
};
TORCH_MODULE(FieldBrain);

}  // namespace fieldbrain
