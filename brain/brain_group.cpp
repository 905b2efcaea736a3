#include "brain/brain_group.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "brain/host_input.h"

namespace fieldbrain {

BrainGroupImpl::BrainGroupImpl(BrainConfig config, int64_t capacity) : config_(std::move(config)) {
  config_.validate();
  if (capacity < 1) throw std::invalid_argument("BrainGroup: capacity must be >= 1");
  brain_.reset(
      new FieldBrainImpl(config_, std::vector<uint64_t>(capacity, 0), FieldBrainImpl::Scratch{}));
  register_module("brain", brain_);
  rows_ = std::make_unique<RobotRows>(*brain_, capacity);
  cycles_ = rows_->full("cycles");
  owner_.assign(capacity, -1);
  keys_.assign(capacity, 0);
  sensors_ = torch::zeros({capacity, config_.sensory_dim});
  reward_ = torch::zeros({capacity});
}

BrainGroupImpl::~BrainGroupImpl() = default;

BrainGroupImpl::Row BrainGroupImpl::claim(uint64_t key) {
  torch::NoGradGuard no_grad;
  FieldBrainImpl alone(config_, {key});
  return claim(alone);
}

BrainGroupImpl::Row BrainGroupImpl::claim(FieldBrainImpl& alone) {
  if (alone.batch() != 1)
    throw std::invalid_argument("BrainGroup::claim: the brain must hold one robot");
  if (nlohmann::json(alone.config()) != nlohmann::json(config_)) {
    throw std::invalid_argument("BrainGroup::claim: the brain's config differs from the group's");
  }
  const int64_t pos = free_position();
  rows_->copy_in(alone, pos);
  keys_[pos] = alone.keys_[0];
  const Row row = next_row_++;
  owner_[pos] = row;
  position_[row] = pos;
  return row;
}

void BrainGroupImpl::release(Row row) {
  const int64_t pos = position(row);
  owner_[pos] = -1;
  position_.erase(row);
}

int64_t BrainGroupImpl::position(Row row) const {
  const auto it = position_.find(row);
  if (it == position_.end())
    throw std::out_of_range(fmt::format("BrainGroup: no claimed row {}", row));
  return it->second;
}

int64_t BrainGroupImpl::free_position() {
  for (int64_t p = 0; p < capacity(); ++p) {
    if (owner_[p] < 0) return p;
  }
  const int64_t p = capacity();
  grow();
  return p;
}

void BrainGroupImpl::grow() {
  torch::NoGradGuard no_grad;
  const int64_t old_cap = capacity(), cap = 2 * old_cap;
  std::shared_ptr<FieldBrainImpl> bigger(
      new FieldBrainImpl(config_, std::vector<uint64_t>(cap, 0), FieldBrainImpl::Scratch{}));
  auto rows = std::make_unique<RobotRows>(*bigger, cap);
  for (int64_t p = 0; p < old_cap; ++p) {
    if (owner_[p] >= 0) rows_->copy_to(*rows, p, p);
  }
  bigger->set_stage_timing(brain_->stage_times().enabled());
  copies_before_ += rows_->copies();
  rows_ = std::move(rows);
  cycles_ = rows_->full("cycles");
  brain_ = bigger;
  replace_module("brain", brain_);
  owner_.resize(cap, -1);
  keys_.resize(cap, 0);
  auto s = torch::zeros({cap, config_.sensory_dim});
  s.slice(0, 0, old_cap).copy_(sensors_);
  sensors_ = s;
  reward_ = torch::zeros({cap});
}

int64_t BrainGroupImpl::arrange(const std::vector<Row>& rows) {
  const auto k = static_cast<int64_t>(rows.size());
  // Distinct rows (step_into checked) whose positions span k places are one range already.
  int64_t lowest = capacity(), highest = -1;
  for (Row r : rows) {
    const int64_t p = position_.at(r);
    lowest = std::min(lowest, p);
    highest = std::max(highest, p);
  }
  if (highest - lowest + 1 == k) return lowest;
  // Prefix positions not wanted this tick, and wanted robots outside the prefix: pair them.
  std::vector<bool> wanted(k, false);
  std::vector<int64_t> outside;
  for (Row r : rows) {
    const int64_t p = position_.at(r);
    if (p < k)
      wanted[p] = true;
    else
      outside.push_back(p);
  }
  int64_t hole = 0;
  for (int64_t p : outside) {
    while (wanted[hole]) ++hole;
    if (owner_[hole] < 0)
      rows_->copy_to(*rows_, p, hole);  // a free row: one copy suffices
    else
      rows_->swap_rows(p, hole);
    std::swap(owner_[p], owner_[hole]);
    std::swap(keys_[p], keys_[hole]);
    for (int64_t q : {p, hole}) {
      if (owner_[q] >= 0) position_[owner_[q]] = q;
    }
    wanted[hole] = true;
  }
  return 0;
}

void BrainGroupImpl::view(int64_t begin, int64_t end) {
  rows_->view(begin, end);
  brain_->keys_.assign(keys_.begin() + begin, keys_.begin() + end);
}

torch::Tensor BrainGroupImpl::step(const std::vector<Row>& rows, const torch::Tensor& sensors,
                                   const torch::Tensor& reward) {
  if (rows.empty()) throw std::invalid_argument("BrainGroup::step: no rows");
  // The same cycle as step_into, into a motors tensor made for the caller.
  auto motors = torch::empty({static_cast<int64_t>(rows.size()), config_.motor_dim}, torch::kFloat);
  step_into(rows, sensors, reward, motors);
  return motors;
}

void BrainGroupImpl::step_into(const std::vector<Row>& rows, const torch::Tensor& sensors,
                               const torch::Tensor& reward, torch::Tensor& motors) {
  if (rows.empty()) throw std::invalid_argument("BrainGroup::step_into: no rows");
  const auto k = static_cast<int64_t>(rows.size());
  const int64_t S = config_.sensory_dim, M = config_.motor_dim;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!position_.count(rows[i])) {
      throw std::invalid_argument(
          fmt::format("BrainGroup::step_into: row {} is not claimed", rows[i]));
    }
    for (size_t j = i + 1; j < rows.size(); ++j) {
      if (rows[i] == rows[j]) {
        throw std::invalid_argument(
            fmt::format("BrainGroup::step_into: row {} appears twice", rows[i]));
      }
    }
  }
  const auto s = host_input("BrainGroup::step_into", sensors, "sensors", {k, S});
  const auto r = host_input("BrainGroup::step_into", reward, "reward", {k});
  if (!motors.defined() || !motors.device().is_cpu() || motors.scalar_type() != torch::kFloat ||
      !motors.is_contiguous() || motors.sizes() != torch::IntArrayRef({k, M})) {
    throw std::invalid_argument(fmt::format(
        "BrainGroup::step_into: motors must be a contiguous float32 CPU tensor [{}, {}]", k, M));
  }

  const int64_t begin = arrange(rows);
  // Inputs into position order (the range [begin, begin + k)); the motors come back in it.
  order_.resize(rows.size());
  bool identity = true;
  float* sp = sensors_.data_ptr<float>();
  float* rp = reward_.data_ptr<float>();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t p = position_.at(rows[i]) - begin;
    order_[i] = p;
    identity = identity && p == i;
    std::memcpy(sp + p * S, s.data_ptr<float>() + i * S, sizeof(float) * S);
    rp[p] = r.data_ptr<float>()[i];
  }
  view(begin, begin + k);
  brain_->run_cycle(sensors_.slice(0, 0, k), reward_.slice(0, 0, k), motors);
  if (identity) return;
  // Row i must hold position order_[i]'s motors; order_ is a permutation of [0, k) (the
  // stepped robots fill the range), so the rows are permuted in place by swaps: row i takes
  // the row where position order_[i]'s motors are now (positions before i have been swapped
  // away along order_). No scratch, so a tick in another order allocates nothing either.
  float* out = motors.data_ptr<float>();
  for (int64_t i = 0; i < k; ++i) {
    int64_t from = order_[i];
    while (from < i) from = order_[from];
    if (from == i) continue;
    for (int64_t j = 0; j < M; ++j) std::swap(out[i * M + j], out[from * M + j]);
  }
}

int64_t BrainGroupImpl::cycle(Row row) const { return cycles_.data_ptr<int64_t>()[position(row)]; }

uint64_t BrainGroupImpl::key(Row row) const { return keys_[position(row)]; }

nlohmann::json BrainGroupImpl::telemetry(Row row) {
  const int64_t p = position(row);
  view(p, p + 1);
  return brain_->telemetry(0);
}

torch::Tensor BrainGroupImpl::field_slice(Row row, int64_t channel, int64_t z) {
  const int64_t p = position(row);
  view(p, p + 1);
  return brain_->field_slice(0, channel, z);
}

ArchiveContents BrainGroupImpl::archive_contents(Row row) {
  const int64_t p = position(row);
  view(p, p + 1);
  return brain_->archive_contents();
}

void BrainGroupImpl::save(Row row, const std::string& path) { archive_contents(row).save(path); }

int BrainGroupImpl::load(Row row, const std::string& path) {
  const int64_t p = position(row);
  view(p, p + 1);
  brain_->load(path);
  return brain_->loaded_archive_version();
}

torch::Tensor BrainGroupImpl::field(Row row) const { return rows_->full("field")[position(row)]; }

int64_t BrainGroupImpl::size() const { return static_cast<int64_t>(position_.size()); }
int64_t BrainGroupImpl::capacity() const { return rows_->capacity(); }
int64_t BrainGroupImpl::row_copies() const { return copies_before_ + rows_->copies(); }

void BrainGroupImpl::set_stage_timing(bool on) { brain_->set_stage_timing(on); }
const StageTimer& BrainGroupImpl::stage_times() const { return brain_->stage_times(); }

}  // namespace fieldbrain
