// Waiting for a condition that another thread or process makes true, instead of sleeping a
// fixed time and hoping it happened: a busy machine (CI running four builds) stretches every
// fixed sleep, a quiet one wastes it. The deadline is generous on purpose: it only bounds how
// long a broken build hangs; a working one returns as soon as the condition holds.
#pragma once

#include <chrono>
#include <thread>

namespace fieldbrain::test {

// A deadline for conditions that a healthy build meets in milliseconds.
constexpr double kGenerousDeadlineS = 30.0;

// True as soon as pred() is (polled every poll_ms); false when it is still false after
// timeout_s.
template <typename Pred>
bool wait_until(Pred pred, double timeout_s = kGenerousDeadlineS, int poll_ms = 10) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return pred();
}

}  // namespace fieldbrain::test
