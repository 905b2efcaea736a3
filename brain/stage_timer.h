// StageTimer: host time per stage of a brain cycle, for fieldbrain-bench's per-stage column.
//
// Off by default (mark() is then a branch). On the CPU every ATen op has finished when it
// returns, so the host clock between two marks is that stage's cost. On a CUDA device the ops
// are queued, so per-stage numbers would need a sync per stage: the brain never turns this on
// by itself. Fixed storage: marking allocates nothing.
#pragma once

#include <array>
#include <chrono>

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

}  // namespace fieldbrain
