// FieldBrainImpl::step_group: one batched cycle over several single-robot brains of one config,
// through a per-thread scratch batch their states are copied into and back out of (the
// benchmark's "before" row for BrainGroup, brain/brain_group.h, which keeps robots resident).
#include <memory>
#include <stdexcept>
#include <string>

#include "brain/brain_module.h"
#include "brain/field_brain.h"
#include "brain/host_input.h"

namespace fieldbrain {

torch::Tensor FieldBrainImpl::step_group(const std::vector<FieldBrainImpl*>& brains,
                                         const torch::Tensor& sensors, const torch::Tensor& reward) {
  if (brains.empty()) throw std::invalid_argument("FieldBrain::step_group: no brains");
  const auto k = static_cast<int64_t>(brains.size());
  const BrainConfig& config = brains[0]->config_;
  const std::string config_key = nlohmann::json(config).dump();
  for (auto* brain : brains) {
    if (brain == nullptr) throw std::invalid_argument("FieldBrain::step_group: null brain");
    if (brain->batch() != 1) {
      throw std::invalid_argument("FieldBrain::step_group: every brain must hold one robot");
    }
    if (nlohmann::json(brain->config_).dump() != config_key) {
      throw std::invalid_argument("FieldBrain::step_group: brains have different configs");
    }
  }
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = i + 1; j < k; ++j) {
      if (brains[i] == brains[j]) throw std::invalid_argument("FieldBrain::step_group: a brain appears twice");
    }
  }
  const auto s = host_input("FieldBrain::step_group", sensors, "sensors", {k, config.sensory_dim});
  const auto r = host_input("FieldBrain::step_group", reward, "reward", {k});

  // One scratch batch per thread, rebuilt when the config or the group size changes (a
  // cache per size would hold an attractor bank per robot per size).
  thread_local std::string scratch_key;
  thread_local std::shared_ptr<FieldBrainImpl> scratch;
  const std::string key = config_key + "#" + std::to_string(k);
  if (!scratch || scratch_key != key) {
    scratch.reset();
    scratch.reset(new FieldBrainImpl(config, std::vector<uint64_t>(k, 0), Scratch{}));
    scratch_key = key;
  }
  torch::NoGradGuard no_grad;
  // Every buffer is copied robot by robot, except slot buffers (the attractor bank,
  // brain/brain_module.h): only their live slots (flagged on the host) are ever read, so only
  // those travel. `from` row `r` into `to` row `t`; `flags` the live flags of `from` (or -1).
  const auto live_flags = live_slot_index(*scratch);
  auto copy_row = [](const torch::Tensor& from, int64_t r, const torch::Tensor& flags,
                     const torch::Tensor& to, int64_t t) {
    if (!flags.defined()) {
      to.slice(0, t, t + 1).copy_(from.slice(0, r, r + 1));
      return;
    }
    const auto* ok = flags[r].data_ptr<int64_t>();
    for (int64_t j = 0; j < flags.size(1); ++j) {
      if (ok[j]) to[t][j].copy_(from[r][j]);
    }
  };
  auto flags_of = [&](const auto& buffers, size_t b) {
    return live_flags[b] >= 0 ? buffers[live_flags[b]].value() : torch::Tensor();
  };
  const auto batch_buffers = scratch->named_buffers(true);
  for (int64_t i = 0; i < k; ++i) {
    const auto own = brains[i]->named_buffers(true);
    for (size_t b = 0; b < own.size(); ++b) {
      copy_row(own[b].value(), 0, flags_of(own, b), batch_buffers[b].value(), i);
    }
    scratch->keys_[i] = brains[i]->keys_[0];
  }
  torch::Tensor motors;
  try {
    motors = torch::empty({k, config.motor_dim}, torch::kFloat);
    scratch->run_cycle(s, r, motors);
  } catch (...) {
    scratch.reset();  // do not reuse a half-stepped scratch
    throw;
  }
  for (int64_t i = 0; i < k; ++i) {
    const auto own = brains[i]->named_buffers(true);
    for (size_t b = 0; b < own.size(); ++b) {
      copy_row(batch_buffers[b].value(), i, flags_of(batch_buffers, b), own[b].value(), 0);
    }
    brains[i]->last_cycle_ms_ = scratch->last_cycle_ms_;
  }
  return motors;
}

}  // namespace fieldbrain
