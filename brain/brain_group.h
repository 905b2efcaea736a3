// BrainGroup: robots that share (S, M, R, device) living as rows of one resident batched
// FieldBrain: the server's tick (brain/INTERFACE.md "The rule every buffer follows").
//
// A robot claims a row (fresh from its key, or filled from a single-robot brain such as one
// loaded from its save: one copy of its state when it joins) and keeps a stable Row handle until
// it releases it. Capacity doubles when every row is taken (the robots' states move once).
//
// A tick steps any set of rows. The cycle runs on views of every buffer narrowed to one
// contiguous range of positions (brain/robot_rows.h): when the ready robots' positions are
// already one range (the set of the previous tick, any single robot, neighbours), that range
// is stepped in place and no robot state moves. Otherwise the misplaced robots are moved into
// the prefix [0, k): into a free row (one row copy) or swapped with a robot that is not ready
// (two), counted by row_copies(). Two robots whose frames arrive one at a time therefore
// cycle where they are instead of swapping rows every tick. The robots outside the
// stepped range are not touched at all, so a robot's trajectory is bit-identical to the same robot
// stepped alone, whoever else is in the group and whenever they join or leave.
//
// Per-row read-outs (telemetry, field_slice, archive_contents, save, load) view that single
// row, so they are exactly what a single-robot FieldBrain of the same state gives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/field_brain.h"
#include "brain/persistence.h"
#include "brain/robot_rows.h"

namespace fieldbrain {

class BrainGroupImpl : public torch::nn::Module {
 public:
  using Row = int64_t;  // a claimed row: stable for the robot's stay, never reused

  // An empty group of `capacity` rows. Throws std::invalid_argument on a bad config.
  explicit BrainGroupImpl(BrainConfig config, int64_t capacity = 1);
  ~BrainGroupImpl() override;

  // A row whose state is exactly a fresh FieldBrain(config, {key})'s.
  Row claim(uint64_t key);
  // A row holding the state of `alone`, a single-robot brain of the same config (e.g. loaded
  // from a save off the brain thread). Its state is copied in once; `alone` may be dropped.
  Row claim(FieldBrainImpl& alone);
  void release(Row row);

  // One cycle for `rows` (distinct, claimed): sensors [k,S], reward [k] float, finite, in the
  // order of `rows`. Returns motors [k,M] on the CPU in that order. Throws
  // std::invalid_argument naming the problem before any robot's state changes.
  torch::Tensor step(const std::vector<Row>& rows, const torch::Tensor& sensors,
                     const torch::Tensor& reward);
  // The same cycle with the motors written into `motors`, a contiguous float32 CPU tensor [k,M]
  // the caller owns and reuses (the server's tick): on the fast path a steady tick then creates
  // no tensor, in any order of `rows`. Throws std::invalid_argument, no state changed, on a
  // bad buffer too.
  void step_into(const std::vector<Row>& rows, const torch::Tensor& sensors,
                 const torch::Tensor& reward, torch::Tensor& motors);

  int64_t cycle(Row row) const;  // host counter, no sync
  uint64_t key(Row row) const;
  nlohmann::json telemetry(Row row);
  torch::Tensor field_slice(Row row, int64_t channel, int64_t z);  // [R,R] CPU
  ArchiveContents archive_contents(Row row);  // as FieldBrain::archive_contents of that robot
  void save(Row row, const std::string& path);
  // Returns the archive version read (older ones are migrated: FieldBrainImpl::load).
  int load(Row row, const std::string& path);  // throws, row untouched, on a bad file

  // The robot's field [64,R,R,R] on the brain's device: a view of its row (tests, tools).
  torch::Tensor field(Row row) const;

  int64_t size() const;      // claimed rows
  int64_t capacity() const;  // rows allocated
  const BrainConfig& config() const { return config_; }
  // Robot states copied so far by joining, moving into the prefix and growing (one per
  // robot moved): a steady tick adds none.
  int64_t row_copies() const;

  void set_stage_timing(bool on);
  const StageTimer& stage_times() const;

 private:
  int64_t position(Row row) const;
  int64_t free_position();
  void grow();
  // The first position of a contiguous range holding `rows`: where they already are when their
  // positions are one range, else 0 after bringing them into the prefix [0, k), swapping only
  // misplaced robots.
  int64_t arrange(const std::vector<Row>& rows);
  // The brain views positions [begin, end) with their keys.
  void view(int64_t begin, int64_t end);

  BrainConfig config_;
  std::shared_ptr<FieldBrainImpl> brain_;
  std::unique_ptr<RobotRows> rows_;
  std::vector<Row> owner_;                 // per position: the row there, or -1 when free
  std::vector<uint64_t> keys_;             // per position
  std::unordered_map<Row, int64_t> position_;
  Row next_row_ = 1;
  int64_t copies_before_ = 0;       // row copies made by RobotRows that were replaced on growth
  torch::Tensor cycles_;            // [capacity] int64 CPU: every position's cycle count
  torch::Tensor sensors_, reward_;  // [capacity,S], [capacity]: inputs in position order
  std::vector<int64_t> order_;      // per stepped row: its position (reused every tick)
};
TORCH_MODULE(BrainGroup);

}  // namespace fieldbrain
