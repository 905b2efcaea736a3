// The simulator's progress line on stderr: cycles done, cycles/s, collisions, distance and
// mean |motor| over all robots, read from counters the robot threads write; redrawn every
// 0.5 s on a terminal, one line every 5 s in a log.
#pragma once

#include <atomic>
#include <chrono>
#include <vector>

namespace fieldbrain::sim {

// Counters the progress line reads while a robot's thread writes them.
struct LiveCounters {
  std::atomic<long long> cycles{0};
  std::atomic<long long> collisions{0};
  std::atomic<long long> distance_um{0};
  std::atomic<long long> abs_motor_micro{0};
  std::atomic<long long> motor_samples{0};
  std::atomic<long long> reconnecting{0};  // 1 while the robot's connection is being remade
};

class ProgressLine {
 public:
  ProgressLine(std::vector<const LiveCounters*> robots, long long target);
  // Prints when due, or always when final.
  void tick(bool final);

 private:
  std::vector<const LiveCounters*> robots_;
  long long target_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace fieldbrain::sim
