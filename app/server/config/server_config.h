// The server's settings (configs/*.json). Every key has a default; unknown keys are refused so
// a typo never silently falls back to a default. The "brain" object is kept as JSON here and
// parsed by fieldbrain::BrainConfig's from_json in the part that links the brain.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "app/server/config/cluster_config.h"
#include "app/server/config/robot_policy.h"

namespace fieldbrain::server {

// The brain keys a config leaves out. "fast" is the step every shipped config names, so a
// server started without a config runs the same step as one started with configs/default.json.
nlohmann::json default_brain_config();

struct ServerConfig {
  std::string host = "0.0.0.0";            // robot port address
  std::string monitor_host = "127.0.0.1";  // monitor port address: loopback unless chosen
  std::string monitor_token;               // when set, monitor clients must send "auth <token>"
  int port = 9999;                         // robot port; 0 = ephemeral (tests)
  int monitor_port = 9998;                 // monitor port; 0 = ephemeral, -1 = off
  uint32_t max_frame_floats = 4096;        // larger frames are refused before the body is read
  int max_dim = 1024;                      // S and M must lie in 1..max_dim
  double idle_timeout_s = 60;              // no bytes for this long: disconnect
  double handshake_timeout_s = 10;         // no handshake for this long after connect: disconnect
  int max_bad_frames = 10;                 // consecutive bad sensory frames before the close
  size_t max_json_line = 1 << 20;          // bytes per JSON line (robot and monitor ports)
  std::string state_dir = "state";         // per-robot saves; empty = persistence off
  int64_t save_every_cycles = 1000;        // periodic save per robot; 0 = only disconnect/shutdown
  std::string record_dir;                  // record every session here (docs/replay.md); empty = off
  std::string log_level = "info";          // trace, debug, info, warn, error, critical, off
  size_t subscriber_queue = 256;           // lines a monitor subscriber may lag before drops
  int max_monitor_clients = 32;
  int max_connections = 256;               // robot connections at once, all addresses
  int max_connections_per_address = 64;    // robot (and monitor) connections per peer address
  size_t max_write_queue_bytes = 1 << 20;  // unsent reply bytes per connection (both ports)
  int log_lines_per_minute = 60;           // log lines one connection may cause per minute
  double monitor_save_interval_s = 10;     // `save` from the monitor at most this often
  double monitor_work_share = 0.2;         // of the brain thread, all monitor commands together
  bool legacy_push = true;                 // push telemetry to monitor clients that never ask
  double legacy_push_after_s = 1.0;        // silence after connect that marks such a client
  int web_port = -1;                       // web monitor (app/server/web/); -1 = off, 0 = ephemeral
  std::string web_host = "127.0.0.1";      // loopback only unless asked: the page has no login
  // Origins besides the server's own whose pages may open the web WebSocket (web_origin.h),
  // comma-separated "scheme://host[:port]"; empty = only the server's own.
  std::string web_allowed_origins;
  // Limits against floods (issue 24; docs/operating.md "Limits"):
  int web_max_connections = 64;             // HTTP connections to web_port at once
  int web_max_connections_per_address = 8;  // of them from one address
  double web_header_timeout_s = 5;          // a request's headers must arrive within this
  int fd_reserve = 64;                  // descriptors kept free for robots and saves
  int log_lines_per_kind = 20;          // server-wide lines per message kind per minute
  double robot_report_interval_s = 60;  // each robot's rate/latency log line; 0 = off
  int64_t record_max_bytes = int64_t{4} << 30;  // bytes under record_dir, all recordings
  int record_max_sessions = 1000;               // recording folders under record_dir
  RobotPolicy robots;  // identity, takeover and quotas (robot_policy.h)
  ClusterConfig cluster;  // fleet mode (cluster_config.h); off unless named
  nlohmann::json brain = default_brain_config();  // BrainConfig keys

  // Throws std::invalid_argument naming the key when a value is out of range.
  void validate() const;
};

// Throws std::invalid_argument naming the key on an unknown key or a wrong type.
void from_json(const nlohmann::json& j, ServerConfig& c);
void to_json(nlohmann::json& j, const ServerConfig& c);

// Reads and parses a config file; throws std::runtime_error with the path on failure.
ServerConfig load_server_config(const std::string& path);

}  // namespace fieldbrain::server
