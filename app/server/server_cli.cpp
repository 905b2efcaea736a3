#include "app/server/server_cli.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "app/cli/command_line.h"
#include "app/version/version.h"
#include "brain/config_reader.h"

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

void apply_set(nlohmann::json& j, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw std::invalid_argument("--set " + assignment + ": expected KEY=VALUE (e.g. --set port=0)");
  }
  nlohmann::json* at = &j;
  const std::string key = assignment.substr(0, eq);
  size_t begin = 0;
  while (true) {
    const size_t dot = key.find('.', begin);
    const std::string part = key.substr(begin, dot == std::string::npos ? dot : dot - begin);
    if (part.empty()) throw std::invalid_argument("--set " + assignment + ": empty key");
    if (!at->is_object()) *at = nlohmann::json::object();
    at = &(*at)[part];
    if (dot == std::string::npos) break;
    begin = dot + 1;
  }
  const std::string value = assignment.substr(eq + 1);
  nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  *at = parsed.is_discarded() ? nlohmann::json(value) : parsed;
}

CliOutcome parse_server_cli(int argc, char** argv) {
  CliOutcome out;
  CLI::App app{"fieldbrain-server: the field brain for robots of both Python server generations"};
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain-server"));
  std::string config_path;
  app.add_option("-c,--config", config_path, "JSON config file (configs/default.json)");
  app.add_flag("--print-config", out.print_config,
               "print the effective config (file, --set and flags merged; every key, the brain's "
               "defaults included) as JSON and exit");
  std::vector<std::string> sets;
  app.add_option("--set", sets,
                 "set any config key, KEY=VALUE (robots.takeover_after_s=5, brain.seed=7); "
                 "VALUE is JSON or a bare string; the named flags below win");
  app.add_option("--ready-file", out.ready_file,
                 "when serving, also write the ready line (JSON: version, pid, ports) here");

  std::optional<std::string> web_host, web_allowed_origins;
  std::optional<int> web_port;
  override_flag(app, "--web-port", web_port, "web monitor port (0 = ephemeral, -1 = off)");
  override_flag(app, "--web-host", web_host, "web monitor address (default 127.0.0.1)");
  override_flag(app, "--web-allowed-origins", web_allowed_origins,
                "origins besides the server's own whose pages may open the web WebSocket");
  // Limits against floods (issue 24; docs/operating.md "Limits").
  std::optional<int> web_max_connections, web_max_per_address, fd_reserve, log_lines_per_kind,
      record_max_sessions, max_live_per_address;
  std::optional<double> web_header_timeout, robot_report_interval;
  std::optional<int64_t> record_max_bytes;
  override_flag(app, "--web-max-connections", web_max_connections,
                "HTTP connections to the web port at once");
  override_flag(app, "--web-max-connections-per-address", web_max_per_address,
                "HTTP connections to the web port from one address");
  override_flag(app, "--web-header-timeout", web_header_timeout,
                "seconds a web request's headers may take");
  override_flag(app, "--fd-reserve", fd_reserve,
                "file descriptors kept free for robots and saves");
  override_flag(app, "--log-lines-per-kind", log_lines_per_kind,
                "server-wide log lines per message kind per minute");
  override_flag(app, "--robot-report-interval", robot_report_interval,
                "robot_report_interval_s: seconds between each robot's rate/latency log line "
                "(0 = off)");
  override_flag(app, "--record-max-bytes", record_max_bytes, "bytes under record_dir");
  override_flag(app, "--record-max-sessions", record_max_sessions,
                "recording folders under record_dir");
  override_flag(app, "--max-live-brains-per-address", max_live_per_address,
                "robots.max_live_brains_per_address (0 = a quarter of max_live_brains)");
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
  std::optional<double> loop_budget_ms;
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
  override_flag(app, "--loop-budget-ms", loop_budget_ms,
                "robots.loop_budget_ms: binary robots' reply budget (0 = no warning)");
  override_flag(app, "--resolution", resolution, "brain.resolution R");
  override_flag(app, "--attractor-capacity", attractor_capacity, "brain.attractor_capacity");
  override_flag(app, "--seed", seed, "brain.seed");
  override_flag(app, "--telemetry-every", telemetry_every, "brain.telemetry_every");
  override_flag(app, "--field-step", field_step, "brain.field_step");
  override_flag(app, "--device", device, "brain.device (cpu|cuda)");
  override_flag(app, "--profile", profile, "brain.profile (fieldbrain|legacy; docs/legacy.md)");
  override_flag(app, "--legacy-clock", legacy_clock, "brain.legacy_clock (fixed|wall)");
  override_flag(app, "--legacy-planner", legacy_planner, "brain.legacy_planner (off|sync|async)");
  override_flag(app, "--legacy-reward", legacy_reward, "brain.legacy_reward (drop|append)");
  std::optional<std::string> cluster_name;
  std::optional<std::string> etcd;
  std::optional<std::string> server_id;
  override_flag(app, "--cluster", cluster_name,
                "cluster.name: serve as one server of this fleet (docs/fleet.md)");
  override_flag(app, "--etcd", etcd, "cluster.etcd: the fleet's etcd URLs, comma-separated");
  override_flag(app, "--server-id", server_id, "cluster.server_id (default host name:port)");
  override_flag(app, "--sensory-dim", sensory_dim, "brain.sensory_dim (JSON handshake default)");
  override_flag(app, "--motor-dim", motor_dim, "brain.motor_dim (JSON handshake default)");

  // 0 after --help/--version, 2 after a usage error, as every program (app/cli/command_line.h).
  if (const auto status = cli::parse(app, argc, argv)) {
    out.exit_code = *status;
    return out;
  }
  try {
    out.config_path = config_path;
    if (!config_path.empty()) out.config = load_server_config(config_path);
    if (!sets.empty()) {
      // Checked again with the --set keys applied to the file's own JSON (not to the parsed
      // config, whose secrets print masked); errors name --set.
      nlohmann::json j = config_path.empty() ? nlohmann::json::object()
                                             : config::parse_json_file(config_path);
      try {
        for (const auto& assignment : sets) apply_set(j, assignment);
        out.config = j.get<ServerConfig>();
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("--set: ") + e.what());
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: " << e.what() << "\n";
    out.exit_code = 2;
    return out;
  }
  ServerConfig& c = out.config;
  if (cluster_name) c.cluster.name = *cluster_name;
  if (etcd) c.cluster.etcd = *etcd;
  if (server_id) c.cluster.server_id = *server_id;
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
  if (web_allowed_origins) c.web_allowed_origins = *web_allowed_origins;
  if (require_tokens) c.robots.require_tokens = *require_tokens;
  if (binary_key) c.robots.binary_key = *binary_key;
  if (max_live_brains) c.robots.max_live_brains = *max_live_brains;
  if (state_dir_max_bytes) c.robots.state_dir_max_bytes = *state_dir_max_bytes;
  if (loop_budget_ms) c.robots.loop_budget_ms = *loop_budget_ms;
  if (web_max_connections) c.web_max_connections = *web_max_connections;
  if (web_max_per_address) c.web_max_connections_per_address = *web_max_per_address;
  if (web_header_timeout) c.web_header_timeout_s = *web_header_timeout;
  if (fd_reserve) c.fd_reserve = *fd_reserve;
  if (log_lines_per_kind) c.log_lines_per_kind = *log_lines_per_kind;
  if (robot_report_interval) c.robot_report_interval_s = *robot_report_interval;
  if (record_max_bytes) c.record_max_bytes = *record_max_bytes;
  if (record_max_sessions) c.record_max_sessions = *record_max_sessions;
  if (max_live_per_address) c.robots.max_live_brains_per_address = *max_live_per_address;
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
    // Flags are checked with the file; a value is most often the file's, so name it.
    std::cerr << "fieldbrain-server: " << (config_path.empty() ? "" : config_path + ": ")
              << e.what() << "\n";
    out.exit_code = 2;
  }
  return out;
}

}  // namespace fieldbrain::server
