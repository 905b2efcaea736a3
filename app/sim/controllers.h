// Who decides the motors each cycle: the brain server (over a RobotLink), or one of the two
// baselines of the behaviour benchmark, a random-motor controller (each of the 6 values
// uniform in [-1, 1] every cycle, seeded) and a constant-forward controller (thrust 0.5,
// everything else 0).
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "app/sim/brain_connection.h"

namespace fieldbrain::sim {

enum class ControllerKind { Brain, Random, Forward };
ControllerKind parse_controller(const std::string& text);  // brain|random|forward
const char* controller_name(ControllerKind kind);

class Controller {
 public:
  virtual ~Controller() = default;
  // Motors for these sensors; `reward` is the previous cycle's reward when rewards are on.
  virtual std::vector<float> decide(const std::vector<float>& sensors,
                                    std::optional<float> reward) = 0;
  virtual bool remote() const { return false; }  // true when the motors are server replies
};

class BrainController final : public Controller {
 public:
  explicit BrainController(std::unique_ptr<BrainConnection> link) : link_(std::move(link)) {}
  std::vector<float> decide(const std::vector<float>& sensors,
                            std::optional<float> reward) override {
    return link_->exchange(sensors, reward);
  }
  bool remote() const override { return true; }
  BrainConnection& link() { return *link_; }

 private:
  std::unique_ptr<BrainConnection> link_;
};

class RandomController final : public Controller {
 public:
  explicit RandomController(uint64_t seed) : rng_(seed) {}
  std::vector<float> decide(const std::vector<float>&, std::optional<float>) override;

 private:
  std::mt19937_64 rng_;
};

class ForwardController final : public Controller {
 public:
  static constexpr float kThrust = 0.5f;
  std::vector<float> decide(const std::vector<float>&, std::optional<float>) override {
    return {kThrust, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  }
};

}  // namespace fieldbrain::sim
