// Robot-like pacing (--hz N): each cycle starts one period after the previous one started,
// as a robot's control loop does; a cycle whose reply came after its period is a missed
// deadline, and the next one then starts at once (a robot does not catch up with a burst).
// Unpaced (hz 0) the cycles follow each other as fast as the server answers.
#pragma once

#include <chrono>
#include <functional>

namespace fieldbrain::sim {

class CyclePacer {
 public:
  using Clock = std::chrono::steady_clock;
  explicit CyclePacer(double hz) : period_s_(hz > 0 ? 1.0 / hz : 0.0) {}

  bool paced() const { return period_s_ > 0; }
  double period_s() const { return period_s_; }

  // Waits until this cycle's start (at once when unpaced, late, or the first cycle); returns
  // early when stopping() turns true.
  void wait(const std::function<bool()>& stopping);
  // Ends the cycle; true when it ran past its period (a missed deadline; never when unpaced).
  bool done();
  // After a gap (a reconnection): the next cycle starts at once, on a new schedule.
  void restart() { started_ = false; }

 private:
  double period_s_;
  bool started_ = false;
  Clock::time_point tick_;  // this cycle's start
};

}  // namespace fieldbrain::sim
