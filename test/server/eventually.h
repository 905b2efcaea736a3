// Polls a condition that another thread (the server, a child process) makes true.
#pragma once

#include <chrono>
#include <thread>

namespace fieldbrain::server::testing {

// True as soon as pred() is; false when it is still false after timeout_s.
template <typename Pred>
bool eventually(Pred pred, double timeout_s = 5.0) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace fieldbrain::server::testing
