// StageTimer: host time per stage of a brain cycle, for fieldbrain-bench's per-stage column.
//
// Off by default (mark() is then a branch). On the CPU every ATen op has finished when it
// returns, so the host clock between two marks is that stage's cost. On a CUDA device the ops
// are queued, so per-stage numbers would need a sync per stage: the brain never turns this on
// by itself. Fixed storage: marking allocates nothing.
//
// With a counter (count_with), each stage also records how much that counter grew during it:
// fieldbrain-bench passes the CPU pool's tensor-buffer requests, so every stage shows how many
// tensors it still creates (the fast cycle's target is none).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fieldbrain {

class StageTimer {
 public:
  static constexpr int kMaxStages = 16;

  using Counter = int64_t (*)();

  void enable(bool on) { enabled_ = on; }
  // A process-wide monotonic count read at every mark (nullptr: none).
  void count_with(Counter counter) { counter_ = counter; }
  bool enabled() const { return enabled_; }

  // Starts a cycle: forgets the previous cycle's stages.
  void start() {
    count_ = 0;
    if (!enabled_) return;
    last_ = Clock::now();
    if (counter_ != nullptr) last_count_ = counter_();
  }
  // The time since start() or the previous mark() is charged to `stage` (a string literal).
  void mark(const char* stage) {
    if (!enabled_ || count_ == kMaxStages) return;
    const auto now = Clock::now();
    names_[count_] = stage;
    ms_[count_] = std::chrono::duration<double, std::milli>(now - last_).count();
    if (counter_ != nullptr) {
      const int64_t c = counter_();
      counted_[count_] = c - last_count_;
      last_count_ = c;
    }
    ++count_;
    last_ = now;
  }

  int size() const { return count_; }
  const char* name(int i) const { return names_[i]; }
  double ms(int i) const { return ms_[i]; }
  bool counting() const { return counter_ != nullptr; }
  int64_t counted(int i) const { return counted_[i]; }  // the counter's growth in stage i

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_ = false;
  int count_ = 0;
  Clock::time_point last_{};
  Counter counter_ = nullptr;
  int64_t last_count_ = 0;
  std::array<const char*, kMaxStages> names_{};
  std::array<double, kMaxStages> ms_{};
  std::array<int64_t, kMaxStages> counted_{};
};

// Stage times summed over many cycles, in cycle order (for tools that report means).
class StageTotals {
 public:
  void add(const StageTimer& cycle) {
    for (int i = 0; i < cycle.size(); ++i) {
      if (totals_.size() <= static_cast<size_t>(i)) {
        totals_.emplace_back(cycle.name(i), 0.0);
        counted_.emplace_back(cycle.name(i), 0.0);
      }
      totals_[i].second += cycle.ms(i);
      if (cycle.counting()) counted_[i].second += static_cast<double>(cycle.counted(i));
    }
  }
  // (stage, mean ms) over `cycles` cycles.
  std::vector<std::pair<std::string, double>> means(int64_t cycles) const {
    auto out = totals_;
    for (auto& stage : out) stage.second /= static_cast<double>(cycles);
    return out;
  }
  // (stage, mean growth of the timer's counter) over `cycles` cycles.
  std::vector<std::pair<std::string, double>> counted_means(int64_t cycles) const {
    auto out = counted_;
    for (auto& stage : out) stage.second /= static_cast<double>(cycles);
    return out;
  }

 private:
  std::vector<std::pair<std::string, double>> totals_;
  std::vector<std::pair<std::string, double>> counted_;
};

}  // namespace fieldbrain
