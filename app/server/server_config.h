// The server's settings (configs/*.json). Every key has a default; unknown keys are refused so
// a typo never silently falls back to a default. The "brain" object is kept as JSON here and
// parsed by fieldbrain::BrainConfig's from_json in the part that links the brain.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "app/server/robot_policy.h"

namespace fieldbrain::server {

struct ServerConfig {
  std::string host = "0.0.0.0";
  int port = 9999;                   // robot port; 0 = ephemeral (tests)
  int monitor_port = 9998;           // monitor port; 0 = ephemeral, -1 = off
  uint32_t max_frame_floats = 4096;  // larger frames are refused before the body is read
  int max_dim = 1024;                // S and M must lie in 1..max_dim
  double idle_timeout_s = 60;        // no bytes for this long: disconnect
  double handshake_timeout_s = 10;   // no handshake for this long after connect: disconnect
  int max_bad_frames = 10;           // consecutive bad sensory frames before the close
  size_t max_json_line = 1 << 20;    // bytes per JSON line (robot and monitor ports)
  std::string state_dir = "state";   // per-robot saves; empty = persistence off
  int64_t save_every_cycles = 1000;  // periodic save per robot; 0 = only disconnect/shutdown
  std::string log_level = "info";    // trace, debug, info, warn, error, critical, off
  size_t subscriber_queue = 256;     // lines a monitor subscriber may lag before drops
  int max_monitor_clients = 32;
  RobotPolicy robots;  // identity, takeover and quotas (robot_policy.h)
  nlohmann::json brain = nlohmann::json::object();  // BrainConfig keys

  // Throws std::invalid_argument naming the key when a value is out of range.
  void validate() const;
};

// Throws std::invalid_argument naming the key on an unknown key or a wrong type.
void from_json(const nlohmann::json& j, ServerConfig& c);
void to_json(nlohmann::json& j, const ServerConfig& c);

// Reads and parses a config file; throws std::runtime_error with the path on failure.
ServerConfig load_server_config(const std::string& path);

}  // namespace fieldbrain::server
