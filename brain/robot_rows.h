// The rule every brain's state follows: **every registered buffer has the robot on dimension 0**
// (a FieldBrain of B robots holds [B, ...] in every buffer, host counters included), and every
// submodule that keeps a batch size in its options is one that RobotRows knows how to tell a
// new batch size. check_robot_rows() enforces both once, when a brain is built, so a module
// that breaks the rule fails loudly there instead of mixing robots later.
//
// RobotRows is what that rule buys: a brain's whole state can be *viewed* as any contiguous
// range of robots [begin, end) without copying anything. Every buffer's TensorImpl is re-pointed
// (its sizes and storage offset: a view is not a write, robot_rows.cpp) at rows [begin, end) of
// its full-capacity storage, so module members and the registered buffers (which share
// TensorImpls) all see the view, and every module is told the batch end - begin. What to
// re-point and tell comes from the modules (brain/brain_module.h): their buffers, their
// registered scratch, set_batch, and which buffers hold live slots. BrainGroup
// (brain/brain_group.h) steps a contiguous range of rows and reads single rows this way; it
// also moves whole robots between rows with copy_row/swap_rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace fieldbrain {

// Throws std::logic_error naming the buffer whose dimension 0 is not `batch`, or the submodule
// that is not a BrainModule (brain/brain_module.h).
void check_robot_rows(const torch::nn::Module& brain, int64_t batch);

class RobotRows {
 public:
  // `brain` holds `capacity` robots in every buffer and registered scratch (its own and its
  // modules', BrainModule::register_scratch: they follow the view too). It must outlive this.
  RobotRows(torch::nn::Module& brain, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  int64_t begin() const { return begin_; }
  int64_t end() const { return end_; }

  // Re-points every buffer and scratch tensor at rows [begin, end) of its storage and sets the
  // modules' batch to end - begin. A no-op when that is already the view. Copies nothing.
  void view(int64_t begin, int64_t end);

  // The buffer named `name` at full capacity (an alias of its storage, whatever the view).
  const torch::Tensor& full(const std::string& name) const;

  // Robot state moves, each counted in copies(): `from` row 0 of a single-robot brain of the
  // same config into row `to`; rows a and b exchanged (two copies); row `from` copied to row
  // `to` of this or another RobotRows of the same config (a move into a free row, growth).
  // A slot buffer (BrainModule::register_live_slots, the attractor bank) moves only its live
  // slots: a dead slot is never read (its next use overwrites it whole) and saves skip it too.
  void copy_in(const torch::nn::Module& alone, int64_t to);
  void swap_rows(int64_t a, int64_t b);
  void copy_to(RobotRows& other, int64_t from, int64_t to) const;
  int64_t copies() const { return copies_; }

 private:
  // src_live: the row's live flags [slots] when src is a slot buffer, else undefined.
  void copy_row(const torch::Tensor& src, const torch::Tensor& src_live, torch::Tensor dst) const;

  torch::nn::Module& brain_;
  std::vector<std::string> names_;       // buffer names in named_buffers order, then the scratch
  size_t n_buffers_ = 0;                 // names_[0, n_buffers_) are buffers (state)
  std::vector<torch::Tensor> live_;      // the tensors the brain uses (re-pointed by view)
  std::vector<torch::Tensor> full_;      // aliases of the same storage at full capacity
  std::vector<int64_t> live_flags_;      // per buffer: its live-flag buffer's index, or -1
  int64_t capacity_;
  int64_t begin_ = 0, end_ = 0;
  mutable int64_t copies_ = 0;
};

}  // namespace fieldbrain
