#include "app/server/server_cli.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

namespace fieldbrain::server {
namespace {

// A flag that, when given, overrides one key of the config file.
template <typename T>
void override_flag(CLI::App& app, const std::string& flags, std::optional<T>& slot,
                   const std::string& help) {
  app.add_option_function<T>(
      flags, [&slot](const T& v) { slot = v; }, help);
}

}  // namespace

CliOutcome parse_server_cli(int argc, char** argv) {
  CliOutcome out;
  CLI::App app{"fieldbrain-server: the field brain for robots of both Python server generations"};
  std::string config_path;
  app.add_option("-c,--config", config_path, "JSON config file (configs/default.json)");
  app.add_flag("--print-config", out.print_config, "print the merged config and exit");

  std::optional<std::string> web_host;
  std::optional<int> web_port;
  override_flag(app, "--web-port", web_port, "web monitor port (0 = ephemeral, -1 = off)");
  override_flag(app, "--web-host", web_host, "web monitor address (default 127.0.0.1)");
  std::optional<std::string> host, monitor_host, monitor_token, state_dir, log_level, field_step,
      device, record_dir, profile, legacy_clock, legacy_planner, legacy_reward;
  std::optional<int> port, monitor_port, max_dim, max_bad_frames, max_monitor_clients,
      max_connections, max_per_address, log_lines_per_minute;
  std::optional<size_t> max_write_queue;
  std::optional<double> save_interval, legacy_push_after;
  std::optional<bool> legacy_push;
  std::optional<uint32_t> max_frame_floats;
  std::optional<double> idle_timeout, handshake_timeout;
  std::optional<size_t> max_json_line, subscriber_queue;
  std::optional<int64_t> save_every, resolution, attractor_capacity, telemetry_every, sensory_dim,
      motor_dim;
  std::optional<uint64_t> seed;
  override_flag(app, "--host", host, "address of the robot port");
  override_flag(app, "--monitor-host", monitor_host, "address of the monitor port (127.0.0.1)");
  override_flag(app, "--monitor-token", monitor_token, "token remote monitor clients must send");
  override_flag(app, "--max-connections", max_connections, "robot connections at once");
  override_flag(app, "--max-connections-per-address", max_per_address,
                "connections per peer address (each port)");
  override_flag(app, "--max-write-queue-bytes", max_write_queue,
                "unsent reply bytes per connection before it is paused or cut off");
  override_flag(app, "--log-lines-per-minute", log_lines_per_minute,
                "log lines one connection may cause per minute");
  override_flag(app, "--monitor-save-interval", save_interval, "seconds between monitor saves");
  override_flag(app, "--legacy-push", legacy_push,
                "push 2025-08-20 telemetry to silent monitor clients (true|false)");
  override_flag(app, "--legacy-push-after", legacy_push_after,
                "seconds of silence that mark a 2025-08-20 monitor client");
  std::optional<bool> require_tokens;
  std::optional<std::string> binary_key;
  std::optional<int> max_live_brains;
  std::optional<int64_t> state_dir_max_bytes;
  override_flag(app, "-p,--port", port, "robot port (0 = ephemeral)");
  override_flag(app, "--monitor-port", monitor_port, "monitor port (0 = ephemeral, -1 = off)");
  override_flag(app, "--state-dir", state_dir, "per-robot save directory ('' = no persistence)");
  override_flag(app, "--max-frame-floats", max_frame_floats, "largest frame accepted");
  override_flag(app, "--max-dim", max_dim, "largest S or M accepted at handshake");
  override_flag(app, "--idle-timeout", idle_timeout, "seconds without data before disconnect");
  override_flag(app, "--handshake-timeout", handshake_timeout, "seconds to send a handshake");
  override_flag(app, "--max-bad-frames", max_bad_frames, "consecutive bad frames before close");
  override_flag(app, "--max-json-line", max_json_line, "longest JSON line in bytes");
  override_flag(app, "--save-every", save_every, "periodic save every N cycles (0 = off)");
  override_flag(app, "--record", record_dir, "record every robot session here (docs/replay.md)");
  override_flag(app, "--log-level", log_level, "trace|debug|info|warn|error|critical|off");
  override_flag(app, "--subscriber-queue", subscriber_queue, "lines a subscriber may lag");
  override_flag(app, "--max-monitor-clients", max_monitor_clients, "monitor connections");
  override_flag(app, "--require-tokens", require_tokens, "robots.require_tokens (true|false)");
  override_flag(app, "--binary-key", binary_key, "robots.binary_key (profile|address)");
  override_flag(app, "--max-live-brains", max_live_brains, "robots.max_live_brains");
  override_flag(app, "--state-dir-max-bytes", state_dir_max_bytes,
                "robots.state_dir_max_bytes (0 = no budget)");
  override_flag(app, "--resolution", resolution, "brain.resolution R");
  override_flag(app, "--attractor-capacity", attractor_capacity, "brain.attractor_capacity");
  override_flag(app, "--seed", seed, "brain.seed");
  override_flag(app, "--telemetry-every", telemetry_every, "brain.telemetry_every");
  override_flag(app, "--field-step", field_step, "brain.field_step");
  override_flag(app, "--device", device, "brain.device (cpu|cuda)");
  override_flag(app, "--profile", profile, "brain.profile (fieldbrain|legacy; docs/legacy.md)");
  override_flag(app, "--legacy-clock", legacy_clock, "brain.legacy_clock (fixed|wall)");
  override_flag(app, "--legacy-planner", legacy_planner, "brain.legacy_planner (off|sync)");
  override_flag(app, "--legacy-reward", legacy_reward, "brain.legacy_reward (drop|append)");
  override_flag(app, "--sensory-dim", sensory_dim, "brain.sensory_dim (JSON handshake default)");
  override_flag(app, "--motor-dim", motor_dim, "brain.motor_dim (JSON handshake default)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    out.exit_code = app.exit(e);
    return out;
  }
  try {
    if (!config_path.empty()) out.config = load_server_config(config_path);
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: " << e.what() << "\n";
    out.exit_code = 2;
    return out;
  }
  ServerConfig& c = out.config;
  if (host) c.host = *host;
  if (monitor_host) c.monitor_host = *monitor_host;
  if (monitor_token) c.monitor_token = *monitor_token;
  if (max_connections) c.max_connections = *max_connections;
  if (max_per_address) c.max_connections_per_address = *max_per_address;
  if (max_write_queue) c.max_write_queue_bytes = *max_write_queue;
  if (log_lines_per_minute) c.log_lines_per_minute = *log_lines_per_minute;
  if (save_interval) c.monitor_save_interval_s = *save_interval;
  if (legacy_push) c.legacy_push = *legacy_push;
  if (legacy_push_after) c.legacy_push_after_s = *legacy_push_after;
  if (port) c.port = *port;
  if (monitor_port) c.monitor_port = *monitor_port;
  if (state_dir) c.state_dir = *state_dir;
  if (max_frame_floats) c.max_frame_floats = *max_frame_floats;
  if (max_dim) c.max_dim = *max_dim;
  if (idle_timeout) c.idle_timeout_s = *idle_timeout;
  if (handshake_timeout) c.handshake_timeout_s = *handshake_timeout;
  if (max_bad_frames) c.max_bad_frames = *max_bad_frames;
  if (max_json_line) c.max_json_line = *max_json_line;
  if (save_every) c.save_every_cycles = *save_every;
  if (record_dir) c.record_dir = *record_dir;
  if (log_level) c.log_level = *log_level;
  if (subscriber_queue) c.subscriber_queue = *subscriber_queue;
  if (max_monitor_clients) c.max_monitor_clients = *max_monitor_clients;
  if (web_port) c.web_port = *web_port;
  if (web_host) c.web_host = *web_host;
  if (require_tokens) c.robots.require_tokens = *require_tokens;
  if (binary_key) c.robots.binary_key = *binary_key;
  if (max_live_brains) c.robots.max_live_brains = *max_live_brains;
  if (state_dir_max_bytes) c.robots.state_dir_max_bytes = *state_dir_max_bytes;
  if (resolution) c.brain["resolution"] = *resolution;
  if (attractor_capacity) c.brain["attractor_capacity"] = *attractor_capacity;
  if (seed) c.brain["seed"] = *seed;
  if (telemetry_every) c.brain["telemetry_every"] = *telemetry_every;
  if (field_step) c.brain["field_step"] = *field_step;
  if (device) c.brain["device"] = *device;
  if (profile) c.brain["profile"] = *profile;
  if (legacy_clock) c.brain["legacy_clock"] = *legacy_clock;
  if (legacy_planner) c.brain["legacy_planner"] = *legacy_planner;
  if (legacy_reward) c.brain["legacy_reward"] = *legacy_reward;
  if (sensory_dim) c.brain["sensory_dim"] = *sensory_dim;
  if (motor_dim) c.brain["motor_dim"] = *motor_dim;
  try {
    c.validate();
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: " << e.what() << "\n";
    out.exit_code = 2;
  }
  return out;
}

}  // namespace fieldbrain::server
