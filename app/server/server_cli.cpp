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

  std::optional<std::string> host, state_dir, log_level, field_step, device;
  std::optional<int> port, monitor_port, max_dim, max_bad_frames, max_monitor_clients;
  std::optional<uint32_t> max_frame_floats;
  std::optional<double> idle_timeout, handshake_timeout;
  std::optional<size_t> max_json_line, subscriber_queue;
  std::optional<int64_t> save_every, resolution, attractor_capacity, telemetry_every, sensory_dim,
      motor_dim;
  std::optional<uint64_t> seed;
  std::optional<bool> require_tokens;
  std::optional<std::string> binary_key;
  std::optional<int> max_live_brains;
  std::optional<int64_t> state_dir_max_bytes;
  override_flag(app, "--host", host, "address to listen on");
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
  if (log_level) c.log_level = *log_level;
  if (subscriber_queue) c.subscriber_queue = *subscriber_queue;
  if (max_monitor_clients) c.max_monitor_clients = *max_monitor_clients;
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
