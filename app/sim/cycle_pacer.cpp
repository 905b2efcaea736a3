#include "app/sim/cycle_pacer.h"

#include <algorithm>
#include <thread>

namespace fieldbrain::sim {

void CyclePacer::wait(const std::function<bool()>& stopping) {
  if (!started_) {
    started_ = true;
    tick_ = Clock::now();
    return;
  }
  if (!paced()) return;
  // In steps of at most 20 ms, so that a Ctrl-C is seen at once even at 1 Hz.
  for (auto now = Clock::now(); now < tick_ && !stopping(); now = Clock::now()) {
    std::this_thread::sleep_for(std::min<Clock::duration>(tick_ - now, std::chrono::milliseconds(20)));
  }
}

bool CyclePacer::done() {
  if (!paced()) return false;
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(period_s_));
  const auto deadline = tick_ + period;
  const auto now = Clock::now();
  const bool missed = now > deadline;
  tick_ = missed ? now : deadline;
  return missed;
}

}  // namespace fieldbrain::sim
