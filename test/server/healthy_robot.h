// A well-behaved robot cycling on its own thread while a test misbehaves on other
// connections. Every reply is checked against an independent toy brain fed the same inputs,
// so "unaffected" means: every frame answered, in order, with the motors its own history
// predicts, and the brain's cycle count equal to the frames sent.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "test/server/toy_engine.h"

namespace fieldbrain::server::testing {

class HealthyRobot {
 public:
  explicit HealthyRobot(uint16_t port, std::string id = "healthy");
  ~HealthyRobot();
  // Stops after the current cycle; returns the cycles completed.
  int stop();
  int cycles() const { return cycles_.load(); }
  const std::string& failure() const { return failure_; }  // "" when all replies were right
  // Waits (bounded) until at least n cycles are done.
  bool wait_for_cycles(int n, double timeout_s = 20.0) const;

 private:
  void run(uint16_t port);
  std::string id_;
  std::atomic<bool> stop_{false};
  std::atomic<int> cycles_{0};
  std::string failure_;
  std::thread thread_;
};

}  // namespace fieldbrain::server::testing
