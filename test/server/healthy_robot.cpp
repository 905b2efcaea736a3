#include "test/server/healthy_robot.h"

#include <chrono>
#include <cmath>

namespace fieldbrain::server::testing {

HealthyRobot::HealthyRobot(uint16_t port, std::string id)
    : id_(std::move(id)), thread_([this, port] { run(port); }) {}

HealthyRobot::~HealthyRobot() { stop(); }

int HealthyRobot::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return cycles_.load();
}

bool HealthyRobot::wait_for_cycles(int n, double timeout_s) const {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (cycles_.load() < n && std::chrono::steady_clock::now() < end) {
    if (!failure_.empty()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return cycles_.load() >= n;
}

void HealthyRobot::run(uint16_t port) {
  try {
    RobotClient c(port);
    nlohmann::json hs = {
        {"type", "handshake"}, {"robot_id", id_}, {"sensory_dim", 6}, {"motor_dim", 3}};
    c.send_text(hs.dump() + "\n");
    auto reply = c.read_line();
    if (!reply) throw std::runtime_error("no handshake reply");
    ToyEngine mirror;
    auto slot = mirror.create(id_, 6, 3);
    for (int cycle = 1; !stop_; ++cycle) {
      std::vector<float> s(6);
      for (int i = 0; i < 6; ++i) s[i] = std::sin(0.05f * cycle * (i + 1));
      nlohmann::json req = {{"type", "sensors"}, {"values", s}, {"reward", 0.1}};
      c.send_text(req.dump() + "\n");
      auto line = c.read_line();
      if (!line) throw std::runtime_error("no reply to cycle " + std::to_string(cycle));
      auto j = nlohmann::json::parse(*line);
      const auto expected = mirror.step_group({slot}, s, {0.1f});
      if (j.value("type", "") != "motors" || j.value("cycle", -1) != cycle) {
        throw std::runtime_error("cycle " + std::to_string(cycle) + ": unexpected reply " + *line);
      }
      const auto got = j["values"].get<std::vector<float>>();
      for (int k = 0; k < 3; ++k) {
        if (std::abs(got[k] - expected[k]) > 1e-5f) {
          throw std::runtime_error("cycle " + std::to_string(cycle) + ": motors differ");
        }
      }
      cycles_.store(cycle);
    }
  } catch (const std::exception& e) {
    failure_ = e.what();
  }
}

}  // namespace fieldbrain::server::testing
