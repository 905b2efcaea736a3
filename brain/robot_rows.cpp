#include "brain/robot_rows.h"

#include <stdexcept>

#include <fmt/format.h>

#include "brain/brain_module.h"

namespace fieldbrain {
namespace {

// Gives `m` the batch size; false when it is not a BrainModule (check_robot_rows refuses those).
bool set_module_batch(torch::nn::Module& m, int64_t batch) {
  auto* module = dynamic_cast<BrainModule*>(&m);
  if (module != nullptr) module->set_batch(batch);
  return module != nullptr;
}

// Rows [begin, end) of `full` (a tensor with the robot on dimension 0) as `live`'s new extent.
// Metadata only, on the tensor's own TensorImpl: Tensor::set_ is an in-place operation to
// autograd and bumps the version counter the storage's views share, which the fast cycle reads
// as "the attractor bank was written from outside" (brain/cycle_fused.h) and answered with a
// rebuild of the bank's shadow on every change of view.
void point_at_rows(torch::Tensor& live, const torch::Tensor& full, int64_t begin, int64_t end) {
  std::vector<int64_t> sizes = full.sizes().vec();
  sizes[0] = end - begin;
  const int64_t offset = full.storage_offset() + begin * full.stride(0);
  c10::TensorImpl* impl = live.unsafeGetTensorImpl();
  if (live.storage().is_alias_of(full.storage()) && impl->allow_tensor_metadata_change()) {
    impl->set_sizes_and_strides(sizes, full.strides());
    impl->set_storage_offset(offset);
    return;
  }
  live.set_(full.storage(), offset, sizes, full.strides());
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
          fmt::format("brain module {} is not a BrainModule (brain/brain_module.h): every module "
                      "of a brain must say how it takes a batch size",
                      item.key()));
    }
  }
}

RobotRows::RobotRows(torch::nn::Module& brain, int64_t capacity)
    : brain_(brain), capacity_(capacity), end_(capacity) {
  check_robot_rows(brain, capacity);
  for (const auto& item : brain.named_buffers(true)) {
    names_.push_back(item.key());
    live_.push_back(item.value());
  }
  n_buffers_ = live_.size();
  live_flags_ = live_slot_index(brain);
  for (auto& t : module_scratch(brain)) {
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

void RobotRows::copy_row(const torch::Tensor& src, const torch::Tensor& src_live,
                         torch::Tensor dst) const {
  if (!src_live.defined()) {
    dst.copy_(src);
    return;
  }
  const auto* ok = src_live.data_ptr<int64_t>();  // [slots] int64 CPU
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
  for (n = 0; n < n_buffers_; ++n) {
    const int64_t flags = live_flags_[n];
    copy_row(buffers[n].value()[0], flags >= 0 ? buffers[flags].value()[0] : torch::Tensor(),
             full_[n][to]);
  }
  ++copies_;
}

void RobotRows::swap_rows(int64_t a, int64_t b) {
  torch::NoGradGuard no_grad;
  // A slot buffer exchanges every slot live in either row (a slot dead in both is not state);
  // the flags are read before any row moves.
  std::vector<torch::Tensor> either(n_buffers_);
  for (size_t i = 0; i < n_buffers_; ++i) {
    const int64_t flags = live_flags_[i];
    if (flags >= 0) either[i] = (full_[flags][a] + full_[flags][b]).clamp_max(1);
  }
  for (size_t i = 0; i < n_buffers_; ++i) {
    auto ra = full_[i][a], rb = full_[i][b];
    if (either[i].defined()) {
      const auto* ok = either[i].data_ptr<int64_t>();
      for (int64_t j = 0; j < either[i].size(0); ++j) {
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
  std::vector<torch::Tensor> flags(n_buffers_);
  for (size_t i = 0; i < n_buffers_; ++i) {
    if (live_flags_[i] >= 0) flags[i] = full_[live_flags_[i]][from];
  }
  for (size_t i = 0; i < n_buffers_; ++i) copy_row(full_[i][from], flags[i], other.full_[i][to]);
  ++copies_;
}

}  // namespace fieldbrain
