// A JSON-lines robot for the identity, takeover and quota tests: handshake (optionally with a
// token, from a chosen source address) and lock-step sensors -> motors.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/server/protocol/robot_client.h"

namespace fieldbrain::server::testing {

// Sends a JSON handshake; returns the reply line parsed (nullopt when none came).
inline std::optional<nlohmann::json> json_handshake(RobotClient& c, const std::string& id, int s,
                                                    int m, const std::string& token = "") {
  nlohmann::json hs = {
      {"type", "handshake"}, {"robot_id", id}, {"sensory_dim", s}, {"motor_dim", m}};
  if (!token.empty()) hs["token"] = token;
  c.send_text(hs.dump() + "\n");
  auto line = c.read_line();
  if (!line) return std::nullopt;
  return nlohmann::json::parse(*line);
}

// One sensors -> motors exchange; returns the reply (nullopt on timeout or close).
inline std::optional<nlohmann::json> json_step(RobotClient& c, const std::vector<float>& sensors) {
  nlohmann::json req = {{"type", "sensors"}, {"values", sensors}};
  c.send_text(req.dump() + "\n");
  auto line = c.read_line();
  if (!line) return std::nullopt;
  return nlohmann::json::parse(*line);
}

}  // namespace fieldbrain::server::testing
