#include "brain/robot_rows.h"

#include <stdexcept>

#include <fmt/format.h>

#include "brain/field_dynamics.h"
#include "brain/hierarchical_predictor.h"
#include "brain/motor_echo.h"
#include "brain/motor_generation.h"
#include "brain/next_input_prediction.h"
#include "brain/novelty_modulation.h"
#include "brain/prediction_error_field.h"
#include "brain/reward_attractors.h"
#include "brain/ring_buffer.h"
#include "brain/sensory_imprint.h"
#include "brain/spatial_pooling.h"

namespace fieldbrain {
namespace {

constexpr const char* kBank = "attractors.bank";
constexpr const char* kBankValid = "attractors.valid";

// Gives `m` the batch size when it is an `Impl`.
template <typename Impl>
bool set_batch_if(torch::nn::Module& m, int64_t batch) {
  auto* impl = dynamic_cast<Impl*>(&m);
  if (impl != nullptr) impl->options.batch(batch);
  return impl != nullptr;
}

// The one place that knows which modules keep a batch size in their options. Returns false for
// a module type it does not know (check_robot_rows refuses those).
bool set_module_batch(torch::nn::Module& m, int64_t batch) {
  return set_batch_if<RingBufferImpl>(m, batch) ||
         set_batch_if<HierarchicalPredictorImpl>(m, batch) ||
         set_batch_if<PredictionErrorFieldImpl>(m, batch) ||
         set_batch_if<SensoryImprintImpl>(m, batch) ||
         set_batch_if<NoveltyModulationImpl>(m, batch) ||
         set_batch_if<RewardAttractorsImpl>(m, batch) ||
         set_batch_if<FieldDynamicsImpl>(m, batch) || set_batch_if<SpatialPoolingImpl>(m, batch) ||
         set_batch_if<NextInputPredictionImpl>(m, batch) ||
         set_batch_if<MotorGenerationImpl>(m, batch) ||
         dynamic_cast<MotorEchoImpl*>(&m) != nullptr;  // MotorEcho holds no per-robot state
}

// Rows [begin, end) of `full` (a tensor with the robot on dimension 0) as `live`'s new extent.
void point_at_rows(torch::Tensor& live, const torch::Tensor& full, int64_t begin, int64_t end) {
  std::vector<int64_t> sizes = full.sizes().vec();
  sizes[0] = end - begin;
  live.set_(full.storage(), full.storage_offset() + begin * full.stride(0), sizes, full.strides());
}

}  // namespace

void check_robot_rows(const torch::nn::Module& brain, int64_t batch) {
  for (const auto& item : brain.named_buffers(true)) {
    const auto& t = item.value();
    if (t.dim() == 0 || t.size(0) != batch) {
      throw std::logic_error(fmt::format(
          "brain buffer {} has shape {}: every buffer must have the robot on dimension 0 "
          "(size {}; brain/robot_rows.h)",
          item.key(), c10::str(t.sizes()), batch));
    }
  }
  for (const auto& item : brain.named_modules("", /*include_self=*/false)) {
    // Setting the batch the brain already has changes nothing; an unknown type is refused.
    if (!set_module_batch(*item.value(), batch)) {
      throw std::logic_error(
          fmt::format("brain module {} is of a type brain/robot_rows.cpp does not know: tell "
                      "set_module_batch how to give it a batch size",
                      item.key()));
    }
  }
}

RobotRows::RobotRows(torch::nn::Module& brain, std::vector<torch::Tensor> scratch, int64_t capacity)
    : brain_(brain), capacity_(capacity), end_(capacity) {
  check_robot_rows(brain, capacity);
  for (const auto& item : brain.named_buffers(true)) {
    if (item.key() == kBank) bank_ = static_cast<int64_t>(names_.size());
    if (item.key() == kBankValid) bank_valid_ = static_cast<int64_t>(names_.size());
    names_.push_back(item.key());
    live_.push_back(item.value());
  }
  n_buffers_ = live_.size();
  if (bank_ < 0 || bank_valid_ < 0)
    throw std::logic_error("RobotRows: the brain has no attractor bank");
  for (auto& t : scratch) {
    if (t.dim() == 0 || t.size(0) != capacity) {
      throw std::logic_error("RobotRows: a scratch tensor does not have the robot on dimension 0");
    }
    names_.push_back("(scratch)");
    live_.push_back(t);
  }
  for (const auto& t : live_) full_.push_back(t.detach());  // same storage, own sizes
}

void RobotRows::view(int64_t begin, int64_t end) {
  if (begin == begin_ && end == end_) return;
  if (begin < 0 || end > capacity_ || begin >= end) {
    throw std::out_of_range(fmt::format("RobotRows::view: [{},{}) of {}", begin, end, capacity_));
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < live_.size(); ++i) point_at_rows(live_[i], full_[i], begin, end);
  for (const auto& item : brain_.named_modules("", /*include_self=*/false)) {
    set_module_batch(*item.value(), end - begin);
  }
  begin_ = begin;
  end_ = end;
}

const torch::Tensor& RobotRows::full(const std::string& name) const {
  for (size_t i = 0; i < n_buffers_; ++i) {
    if (names_[i] == name) return full_[i];
  }
  throw std::out_of_range("RobotRows: no buffer named " + name);
}

void RobotRows::copy_row(const torch::Tensor& src, const torch::Tensor& src_live, torch::Tensor dst,
                         bool is_bank) const {
  if (!is_bank) {
    dst.copy_(src);
    return;
  }
  const auto* ok = src_live.data_ptr<int64_t>();  // [A] int64 CPU
  for (int64_t j = 0; j < src_live.size(0); ++j) {
    if (ok[j]) dst[j].copy_(src[j]);
  }
}

void RobotRows::copy_in(const torch::nn::Module& alone, int64_t to) {
  torch::NoGradGuard no_grad;
  const auto buffers = alone.named_buffers(true);
  size_t n = 0;
  for (const auto& item : buffers) {
    if (n >= n_buffers_ || names_[n] != item.key() || item.value().size(0) != 1 ||
        item.value().sizes().slice(1) != full_[n].sizes().slice(1)) {
      throw std::invalid_argument(
          "RobotRows::copy_in: not a single-robot brain of the same config");
    }
    ++n;
  }
  if (n != n_buffers_)
    throw std::invalid_argument("RobotRows::copy_in: not a brain of the same kind");
  const auto& live = buffers[kBankValid];
  n = 0;
  for (const auto& item : buffers) {
    copy_row(item.value()[0], live[0], full_[n][to], static_cast<int64_t>(n) == bank_);
    ++n;
  }
  ++copies_;
}

void RobotRows::swap_rows(int64_t a, int64_t b) {
  torch::NoGradGuard no_grad;
  // The bank: exchange every slot live in either row (a slot dead in both is not state).
  const auto va = full_[bank_valid_][a].clone(), vb = full_[bank_valid_][b].clone();
  const auto either = (va + vb).clamp_max(1);
  for (size_t i = 0; i < n_buffers_; ++i) {
    auto ra = full_[i][a], rb = full_[i][b];
    if (static_cast<int64_t>(i) == bank_) {
      const auto* ok = either.data_ptr<int64_t>();
      for (int64_t j = 0; j < either.size(0); ++j) {
        if (!ok[j]) continue;
        const auto tmp = ra[j].clone();
        ra[j].copy_(rb[j]);
        rb[j].copy_(tmp);
      }
      continue;
    }
    const auto tmp = ra.clone();
    ra.copy_(rb);
    rb.copy_(tmp);
  }
  copies_ += 2;
}

void RobotRows::copy_to(RobotRows& other, int64_t from, int64_t to) const {
  torch::NoGradGuard no_grad;
  if (other.names_ != names_)
    throw std::invalid_argument("RobotRows::copy_to: brains of another kind");
  const auto live = full_[bank_valid_][from];
  for (size_t i = 0; i < n_buffers_; ++i) {
    copy_row(full_[i][from], live, other.full_[i][to], static_cast<int64_t>(i) == bank_);
  }
  ++copies_;
}

}  // namespace fieldbrain
