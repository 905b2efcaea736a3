// BrainModule: the base of every module of the fieldbrain cycle, between torch::nn::Module and
// its Impl. It holds what a brain's row views (brain/robot_rows.h) and a group's batch
// (brain/brain_group.h, FieldBrainImpl::step_group) need to know about a module, declared by the
// module itself, so nothing outside it keeps a list of modules:
//  - set_batch: the number of robots its per-robot tensors hold now (a row view narrows them);
//  - register_scratch: per-robot tensors that are not state (not saved, not registered buffers)
//    but must follow a row view: the fused operators' work areas, a kernel's output buffer;
//  - write_facts / advance_host: its part of the cycle's host work (brain/cycle_facts.h: the ring
//    counts the fused operators read; brain/FUSED.md rule 4: the fused cycle's bookkeeping);
//  - register_live_slots: a buffer [B, slots, ...] of which only the slots flagged in another
//    buffer [B, slots] (int64 0/1, on the CPU) are state; the others are never read before
//    being overwritten whole, so moves and saves skip them (the attractor bank: 64 MiB a robot
//    at R = 32).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace fieldbrain {

struct CycleContext;

class BrainModule : public torch::nn::Module {
 public:
  using torch::nn::Module::Module;

  // The module now holds `batch` robots. Every module with a batch size in its options sets it.
  virtual void set_batch(int64_t batch) = 0;
  // Writes this module's columns of robot b's row of the cycle's fact table (brain/cycle_facts.h)
  // before the cycle: the counts of the rings it keeps. Every cycle fills the table.
  virtual void write_facts(int64_t /*b*/, int64_t* /*facts*/) const {}
  // The fused cycle's host bookkeeping of this module (ring counts, cycles without input), run
  // once the fact tables are filled and before any launch (brain/FUSED.md rule 4).
  virtual void advance_host(const CycleContext& /*ctx*/) {}

  const std::vector<torch::Tensor>& scratch() const { return scratch_; }
  // (slot buffer, live-flag buffer) names, relative to this module.
  const std::vector<std::pair<std::string, std::string>>& live_slots() const { return live_slots_; }

 protected:
  // Adds `t` (robot on dimension 0) to scratch() and returns it: assign the result to the
  // member, which then shares the tensor a row view re-points.
  torch::Tensor register_scratch(torch::Tensor t) {
    scratch_.push_back(t);
    return t;
  }
  // Declares that only the slots j of buffer `slots`[b] with `live`[b][j] != 0 are state.
  void register_live_slots(std::string slots, std::string live) {
    live_slots_.emplace_back(std::move(slots), std::move(live));
  }

 private:
  std::vector<torch::Tensor> scratch_;
  std::vector<std::pair<std::string, std::string>> live_slots_;
};

// Every BrainModule below `brain` (not itself), in registration order.
std::vector<BrainModule*> brain_modules(torch::nn::Module& brain);
// The scratch of `brain` (when it is a BrainModule) and of every BrainModule below it.
std::vector<torch::Tensor> module_scratch(const torch::nn::Module& brain);
// For each of brain.named_buffers(true), in that order: the index (in the same list) of its
// live-flag buffer when it is a slot buffer (BrainModule::register_live_slots), else -1.
std::vector<int64_t> live_slot_index(const torch::nn::Module& brain);

}  // namespace fieldbrain
