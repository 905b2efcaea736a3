#include "app/server/server_cli.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "app/cli/command_line.h"
#include "app/version/version.h"
#include "brain/config_reader.h"

namespace fieldbrain::server {
namespace {

// The flags that override one key each. A flag given on the command line leaves a setter
// behind, run once the config file and --set are read, so a flag wins over both.
class Overrides {
 public:
  explicit Overrides(CLI::App& app) : app_(app) {}

  // A top-level key (--port -> port).
  template <typename T>
  void key(const std::string& flags, T ServerConfig::*member, const std::string& help) {
    on<T>(flags, help, [member](ServerConfig& c, const T& v) { c.*member = v; });
  }
  // A key of the "robots" object (--max-live-brains -> robots.max_live_brains).
  template <typename T>
  void robots(const std::string& flags, T RobotPolicy::*member, const std::string& help) {
    on<T>(flags, help, [member](ServerConfig& c, const T& v) { c.robots.*member = v; });
  }
  // A key of the "cluster" object (--etcd -> cluster.etcd).
  template <typename T>
  void cluster(const std::string& flags, T ClusterConfig::*member, const std::string& help) {
    on<T>(flags, help, [member](ServerConfig& c, const T& v) { c.cluster.*member = v; });
  }
  // A key of the "brain" object, which stays JSON here (--seed -> brain.seed).
  template <typename T>
  void brain(const std::string& flags, const char* key, const std::string& help) {
    on<T>(flags, help, [key](ServerConfig& c, const T& v) { c.brain[key] = v; });
  }

  void apply(ServerConfig& c) const {
    for (const auto& set : given_) set(c);
  }

 private:
  template <typename T, typename Set>
  void on(const std::string& flags, const std::string& help, Set set) {
    app_.add_option_function<T>(
        flags,
        [this, set](const T& v) { given_.push_back([set, v](ServerConfig& c) { set(c, v); }); },
        help);
  }

  CLI::App& app_;
  std::vector<std::function<void(ServerConfig&)>> given_;
};

// The flags about the config file itself: which file, what to do with it.
struct FileFlags {
  std::string config_path;
  std::vector<std::string> sets;
};

void add_file_flags(CLI::App& app, FileFlags& file, CliOutcome& out) {
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain-server"));
  app.add_option("-c,--config", file.config_path, "JSON config file (configs/default.json)");
  app.add_flag("--print-config", out.print_config,
               "print the effective config (file, --set and flags merged; every key, the brain's "
               "defaults included) as JSON and exit");
  app.add_option("--set", file.sets,
                 "set any config key, KEY=VALUE (robots.takeover_after_s=5, brain.seed=7); "
                 "VALUE is JSON or a bare string; the named flags below win");
  app.add_option("--ready-file", out.ready_file,
                 "when serving, also write the ready line (JSON: version, pid, ports) here");
}

// The web monitor's flags and the limits against floods (issue 24; docs/operating.md
// "Limits").
void add_web_and_limit_flags(Overrides& o) {
  o.key("--web-port", &ServerConfig::web_port, "web monitor port (0 = ephemeral, -1 = off)");
  o.key("--web-host", &ServerConfig::web_host, "web monitor address (default 127.0.0.1)");
  o.key("--web-allowed-origins", &ServerConfig::web_allowed_origins,
        "origins besides the server's own whose pages may open the web WebSocket");
  o.key("--web-max-connections", &ServerConfig::web_max_connections,
        "HTTP connections to the web port at once");
  o.key("--web-max-connections-per-address", &ServerConfig::web_max_connections_per_address,
        "HTTP connections to the web port from one address");
  o.key("--web-header-timeout", &ServerConfig::web_header_timeout_s,
        "seconds a web request's headers may take");
  o.key("--fd-reserve", &ServerConfig::fd_reserve,
        "file descriptors kept free for robots and saves");
  o.key("--log-lines-per-kind", &ServerConfig::log_lines_per_kind,
        "server-wide log lines per message kind per minute");
  o.key("--robot-report-interval", &ServerConfig::robot_report_interval_s,
        "robot_report_interval_s: seconds between each robot's rate/latency log line "
        "(0 = off)");
  o.key("--record-max-bytes", &ServerConfig::record_max_bytes, "bytes under record_dir");
  o.key("--record-max-sessions", &ServerConfig::record_max_sessions,
        "recording folders under record_dir");
  o.robots("--max-live-brains-per-address", &RobotPolicy::max_live_brains_per_address,
           "robots.max_live_brains_per_address (0 = a quarter of max_live_brains)");
}

// The ports' addresses and the limits of each connection.
void add_connection_flags(Overrides& o) {
  o.key("--host", &ServerConfig::host, "address of the robot port");
  o.key("--monitor-host", &ServerConfig::monitor_host, "address of the monitor port (127.0.0.1)");
  o.key("--monitor-token", &ServerConfig::monitor_token, "token remote monitor clients must send");
  o.key("--max-connections", &ServerConfig::max_connections, "robot connections at once");
  o.key("--max-connections-per-address", &ServerConfig::max_connections_per_address,
        "connections per peer address (each port)");
  o.key("--max-write-queue-bytes", &ServerConfig::max_write_queue_bytes,
        "unsent reply bytes per connection before it is paused or cut off");
  o.key("--log-lines-per-minute", &ServerConfig::log_lines_per_minute,
        "log lines one connection may cause per minute");
  o.key("--monitor-save-interval", &ServerConfig::monitor_save_interval_s,
        "seconds between monitor saves");
  o.key("--legacy-push", &ServerConfig::legacy_push,
        "push 2025-08-20 telemetry to silent monitor clients (true|false)");
  o.key("--legacy-push-after", &ServerConfig::legacy_push_after_s,
        "seconds of silence that mark a 2025-08-20 monitor client");
}

// The ports, the wire limits, saves and recordings, logs and the monitor.
void add_server_flags(Overrides& o) {
  o.key("-p,--port", &ServerConfig::port, "robot port (0 = ephemeral)");
  o.key("--monitor-port", &ServerConfig::monitor_port, "monitor port (0 = ephemeral, -1 = off)");
  o.key("--state-dir", &ServerConfig::state_dir, "per-robot save directory ('' = no persistence)");
  o.key("--max-frame-floats", &ServerConfig::max_frame_floats, "largest frame accepted");
  o.key("--max-dim", &ServerConfig::max_dim, "largest S or M accepted at handshake");
  o.key("--idle-timeout", &ServerConfig::idle_timeout_s, "seconds without data before disconnect");
  o.key("--handshake-timeout", &ServerConfig::handshake_timeout_s, "seconds to send a handshake");
  o.key("--max-bad-frames", &ServerConfig::max_bad_frames, "consecutive bad frames before close");
  o.key("--max-json-line", &ServerConfig::max_json_line, "longest JSON line in bytes");
  o.key("--save-every", &ServerConfig::save_every_cycles, "periodic save every N cycles (0 = off)");
  o.key("--record", &ServerConfig::record_dir, "record every robot session here (docs/replay.md)");
  o.key("--log-level", &ServerConfig::log_level, "trace|debug|info|warn|error|critical|off");
  o.key("--subscriber-queue", &ServerConfig::subscriber_queue, "lines a subscriber may lag");
  o.key("--max-monitor-clients", &ServerConfig::max_monitor_clients, "monitor connections");
}

// The "robots" policy's flags.
void add_robot_flags(Overrides& o) {
  o.robots("--require-tokens", &RobotPolicy::require_tokens, "robots.require_tokens (true|false)");
  o.robots("--binary-key", &RobotPolicy::binary_key, "robots.binary_key (profile|address)");
  o.robots("--max-live-brains", &RobotPolicy::max_live_brains, "robots.max_live_brains");
  o.robots("--state-dir-max-bytes", &RobotPolicy::state_dir_max_bytes,
           "robots.state_dir_max_bytes (0 = no budget)");
  o.robots("--loop-budget-ms", &RobotPolicy::loop_budget_ms,
           "robots.loop_budget_ms: binary robots' reply budget (0 = no warning)");
}

// The brain's flags, then the fleet's (docs/fleet.md) and the JSON handshake's defaults.
void add_brain_and_cluster_flags(Overrides& o) {
  o.brain<int64_t>("--resolution", "resolution", "brain.resolution R");
  o.brain<int64_t>("--attractor-capacity", "attractor_capacity", "brain.attractor_capacity");
  o.brain<uint64_t>("--seed", "seed", "brain.seed");
  o.brain<int64_t>("--telemetry-every", "telemetry_every", "brain.telemetry_every");
  o.brain<std::string>("--field-step", "field_step", "brain.field_step");
  o.brain<std::string>("--device", "device", "brain.device (cpu|cuda)");
  o.brain<std::string>("--profile", "profile", "brain.profile (fieldbrain|legacy; docs/legacy.md)");
  o.brain<std::string>("--legacy-clock", "legacy_clock", "brain.legacy_clock (fixed|wall)");
  o.brain<std::string>("--legacy-planner", "legacy_planner",
                       "brain.legacy_planner (off|sync|async)");
  o.brain<std::string>("--legacy-reward", "legacy_reward", "brain.legacy_reward (drop|append)");
  o.cluster("--cluster", &ClusterConfig::name,
            "cluster.name: serve as one server of this fleet (docs/fleet.md)");
  o.cluster("--etcd", &ClusterConfig::etcd, "cluster.etcd: the fleet's etcd URLs, comma-separated");
  o.cluster("--server-id", &ClusterConfig::server_id, "cluster.server_id (default host name:port)");
  o.brain<int64_t>("--sensory-dim", "sensory_dim", "brain.sensory_dim (JSON handshake default)");
  o.brain<int64_t>("--motor-dim", "motor_dim", "brain.motor_dim (JSON handshake default)");
}

// The config file, with the --set keys applied to the file's own JSON (not to the parsed
// config, whose secrets print masked); errors name --set. Throws on any error.
ServerConfig read_config(const FileFlags& file) {
  ServerConfig config;
  if (!file.config_path.empty()) config = load_server_config(file.config_path);
  if (file.sets.empty()) return config;
  nlohmann::json j = file.config_path.empty() ? nlohmann::json::object()
                                              : config::parse_json_file(file.config_path);
  try {
    for (const auto& assignment : file.sets) apply_set(j, assignment);
    return j.get<ServerConfig>();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--set: ") + e.what());
  }
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
  FileFlags file;
  add_file_flags(app, file, out);
  Overrides overrides(app);  // in the order --help lists them
  add_web_and_limit_flags(overrides);
  add_connection_flags(overrides);
  add_server_flags(overrides);
  add_robot_flags(overrides);
  add_brain_and_cluster_flags(overrides);

  // 0 after --help/--version, 2 after a usage error, as every program (app/cli/command_line.h).
  if (const auto status = cli::parse(app, argc, argv)) {
    out.exit_code = *status;
    return out;
  }
  out.config_path = file.config_path;
  try {
    out.config = read_config(file);
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: " << e.what() << "\n";
    out.exit_code = 2;
    return out;
  }
  overrides.apply(out.config);
  try {
    out.config.validate();
  } catch (const std::exception& e) {
    // Flags are checked with the file; a value is most often the file's, so name it.
    std::cerr << "fieldbrain-server: " << (file.config_path.empty() ? "" : file.config_path + ": ")
              << e.what() << "\n";
    out.exit_code = 2;
  }
  return out;
}

}  // namespace fieldbrain::server
