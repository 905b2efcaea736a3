// StageTimer: host time per stage of a brain cycle, for fieldbrain-bench's per-stage column.
//
// Off by default (mark() is then a branch). On the CPU every ATen op has finished when it
// returns, so the host clock between two marks is that stage's cost. On a CUDA device the ops
// are queued, so per-stage numbers would need a sync per stage: the brain never turns this on
// by itself. Fixed storage: marking allocates nothing.
#pragma once

#include <array>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace fieldbrain {

class StageTimer {
 public:
  static constexpr int kMaxStages = 16;

  void enable(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

  // Starts a cycle: forgets the previous cycle's stages.
  void start() {
    count_ = 0;
    if (enabled_) last_ = Clock::now();
  }
  // The time since start() or the previous mark() is charged to `stage` (a string literal).
  void mark(const char* stage) {
    if (!enabled_ || count_ == kMaxStages) return;
    const auto now = Clock::now();
    names_[count_] = stage;
    ms_[count_] = std::chrono::duration<double, std::milli>(now - last_).count();
    ++count_;
    last_ = now;
  }

  int size() const { return count_; }
  const char* name(int i) const { return names_[i]; }
  double ms(int i) const { return ms_[i]; }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_ = false;
  int count_ = 0;
  Clock::time_point last_{};
  std::array<const char*, kMaxStages> names_{};
  std::array<double, kMaxStages> ms_{};
};

// Stage times summed over many cycles, in cycle order (for tools that report means).
class StageTotals {
 public:
  void add(const StageTimer& cycle) {
    for (int i = 0; i < cycle.size(); ++i) {
      if (totals_.size() <= static_cast<size_t>(i)) totals_.emplace_back(cycle.name(i), 0.0);
      totals_[i].second += cycle.ms(i);
    }
  }
  // (stage, mean ms) over `cycles` cycles.
  std::vector<std::pair<std::string, double>> means(int64_t cycles) const {
    auto out = totals_;
    for (auto& stage : out) stage.second /= static_cast<double>(cycles);
    return out;
  }

 private:
  std::vector<std::pair<std::string, double>> totals_;
};

}  // namespace fieldbrain
