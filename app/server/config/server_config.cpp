#include "app/server/config/server_config.h"

#include <arpa/inet.h>

#include <set>
#include <stdexcept>

#include "app/server/config/config_keys.h"
#include "app/server/protocol/web_origin.h"

namespace fieldbrain::server {
namespace {

template <typename T>
void read_key(const nlohmann::json& j, const char* key, T& out) {
  read_config_key(j, "", key, out);
}

void require(bool ok, const char* key, const std::string& what) {
  require_config(ok, "", key, what);
}

bool is_ip_address(const std::string& host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// The keys from_json reads; one list, so a new key (web_port, ...) is one line here and one
// read_key below.
const std::set<std::string>& known_keys() {
  static const std::set<std::string> known = {"host",
                                              "monitor_host",
                                              "monitor_token",
                                              "port",
                                              "monitor_port",
                                              "max_frame_floats",
                                              "max_dim",
                                              "idle_timeout_s",
                                              "handshake_timeout_s",
                                              "max_bad_frames",
                                              "max_json_line",
                                              "state_dir",
                                              "save_every_cycles",
                                              "log_level",
                                              "subscriber_queue",
                                              "max_monitor_clients",
                                              "web_port",
                                              "web_host",
                                              "web_allowed_origins",
                                              "record_dir",
                                              "max_connections",
                                              "max_connections_per_address",
                                              "max_write_queue_bytes",
                                              "log_lines_per_minute",
                                              "monitor_save_interval_s",
                                              "monitor_work_share",
                                              "legacy_push",
                                              "legacy_push_after_s",
                                              "web_max_connections",
                                              "web_max_connections_per_address",
                                              "web_header_timeout_s",
                                              "fd_reserve",
                                              "log_lines_per_kind",
                                              "robot_report_interval_s",
                                              "record_max_bytes",
                                              "record_max_sessions",
                                              "robots",
                                              "cluster",
                                              "brain"};
  return known;
}

}  // namespace

nlohmann::json default_brain_config() { return {{"field_step", "fast"}}; }

void from_json(const nlohmann::json& j, ServerConfig& c) {
  if (!j.is_object()) {
    throw std::invalid_argument("a server config must be a JSON object, not " +
                                config::describe_value(j));
  }
  const auto& known = known_keys();
  config::check_known_keys(j, "", std::vector<std::string>(known.begin(), known.end()));
  read_key(j, "host", c.host);
  read_key(j, "monitor_host", c.monitor_host);
  read_key(j, "monitor_token", c.monitor_token);
  read_key(j, "port", c.port);
  read_key(j, "monitor_port", c.monitor_port);
  read_key(j, "max_frame_floats", c.max_frame_floats);
  read_key(j, "max_dim", c.max_dim);
  read_key(j, "idle_timeout_s", c.idle_timeout_s);
  read_key(j, "handshake_timeout_s", c.handshake_timeout_s);
  read_key(j, "max_bad_frames", c.max_bad_frames);
  read_key(j, "max_json_line", c.max_json_line);
  read_key(j, "state_dir", c.state_dir);
  read_key(j, "save_every_cycles", c.save_every_cycles);
  read_key(j, "log_level", c.log_level);
  read_key(j, "subscriber_queue", c.subscriber_queue);
  read_key(j, "max_monitor_clients", c.max_monitor_clients);
  read_key(j, "web_port", c.web_port);
  read_key(j, "web_host", c.web_host);
  read_key(j, "web_allowed_origins", c.web_allowed_origins);
  read_key(j, "record_dir", c.record_dir);
  read_key(j, "max_connections", c.max_connections);
  read_key(j, "max_connections_per_address", c.max_connections_per_address);
  read_key(j, "max_write_queue_bytes", c.max_write_queue_bytes);
  read_key(j, "log_lines_per_minute", c.log_lines_per_minute);
  read_key(j, "monitor_save_interval_s", c.monitor_save_interval_s);
  read_key(j, "monitor_work_share", c.monitor_work_share);
  read_key(j, "legacy_push", c.legacy_push);
  read_key(j, "legacy_push_after_s", c.legacy_push_after_s);
  read_key(j, "web_max_connections", c.web_max_connections);
  read_key(j, "web_max_connections_per_address", c.web_max_connections_per_address);
  read_key(j, "web_header_timeout_s", c.web_header_timeout_s);
  read_key(j, "fd_reserve", c.fd_reserve);
  read_key(j, "log_lines_per_kind", c.log_lines_per_kind);
  read_key(j, "robot_report_interval_s", c.robot_report_interval_s);
  read_key(j, "record_max_bytes", c.record_max_bytes);
  read_key(j, "record_max_sessions", c.record_max_sessions);
  if (j.contains("robots")) c.robots = j.at("robots").get<RobotPolicy>();
  if (j.contains("cluster")) c.cluster = j.at("cluster").get<ClusterConfig>();
  if (j.contains("brain")) {
    if (!j.at("brain").is_object()) {
      throw std::invalid_argument("config key 'brain' must be an object, not " +
                                  config::describe_value(j.at("brain")));
    }
    // Keys the file leaves out keep the server's brain defaults (field_step "fast").
    c.brain = default_brain_config();
    c.brain.update(j.at("brain"));
  }
}

void to_json(nlohmann::json& j, const ServerConfig& c) {
  j = {{"host", c.host},
       {"monitor_host", c.monitor_host},
       {"monitor_token", c.monitor_token.empty() ? "" : "(set)"},
       {"port", c.port},
       {"monitor_port", c.monitor_port},
       {"max_frame_floats", c.max_frame_floats},
       {"max_dim", c.max_dim},
       {"idle_timeout_s", c.idle_timeout_s},
       {"handshake_timeout_s", c.handshake_timeout_s},
       {"max_bad_frames", c.max_bad_frames},
       {"max_json_line", c.max_json_line},
       {"state_dir", c.state_dir},
       {"save_every_cycles", c.save_every_cycles},
       {"log_level", c.log_level},
       {"subscriber_queue", c.subscriber_queue},
       {"max_monitor_clients", c.max_monitor_clients},
       {"web_port", c.web_port},
       {"web_host", c.web_host},
       {"web_allowed_origins", c.web_allowed_origins},
       {"record_dir", c.record_dir},
       {"max_connections", c.max_connections},
       {"max_connections_per_address", c.max_connections_per_address},
       {"max_write_queue_bytes", c.max_write_queue_bytes},
       {"log_lines_per_minute", c.log_lines_per_minute},
       {"monitor_save_interval_s", c.monitor_save_interval_s},
       {"monitor_work_share", c.monitor_work_share},
       {"legacy_push", c.legacy_push},
       {"legacy_push_after_s", c.legacy_push_after_s},
       {"web_max_connections", c.web_max_connections},
       {"web_max_connections_per_address", c.web_max_connections_per_address},
       {"web_header_timeout_s", c.web_header_timeout_s},
       {"fd_reserve", c.fd_reserve},
       {"log_lines_per_kind", c.log_lines_per_kind},
       {"robot_report_interval_s", c.robot_report_interval_s},
       {"record_max_bytes", c.record_max_bytes},
       {"record_max_sessions", c.record_max_sessions},
       {"robots", c.robots},
       {"cluster", c.cluster},
       {"brain", c.brain}};
}

void ServerConfig::validate() const {
  require(is_ip_address(host), "host", "must be an IP address (e.g. 0.0.0.0 or 127.0.0.1)");
  require(is_ip_address(monitor_host), "monitor_host",
          "must be an IP address (127.0.0.1 keeps the monitor local)");
  require(monitor_token.empty() || monitor_token.size() >= 8, "monitor_token",
          "must be empty (no token) or at least 8 characters");
  require(port >= 0 && port <= 65535, "port", "must be in 0..65535");
  require(monitor_port >= -1 && monitor_port <= 65535, "monitor_port",
          "must be in -1..65535 (-1 = off)");
  require(max_frame_floats >= 16 && max_frame_floats <= (1u << 24), "max_frame_floats",
          "must be in 16..16777216");
  require(max_dim >= 1 && max_dim <= 1024, "max_dim", "must be in 1..1024");
  require(idle_timeout_s > 0, "idle_timeout_s", "must be > 0");
  require(handshake_timeout_s > 0, "handshake_timeout_s", "must be > 0");
  require(max_bad_frames >= 1, "max_bad_frames", "must be >= 1");
  require(max_json_line >= 64, "max_json_line", "must be >= 64");
  require(save_every_cycles >= 0, "save_every_cycles", "must be >= 0");
  require_one_of(log_level, "", "log_level",
                 {"trace", "debug", "info", "warn", "error", "critical", "off"});
  require(subscriber_queue >= 1, "subscriber_queue", "must be >= 1");
  require(max_monitor_clients >= 1, "max_monitor_clients", "must be >= 1");
  require(web_port >= -1 && web_port <= 65535, "web_port", "must be in -1..65535 (-1 = off)");
  require(!web_host.empty(), "web_host", "must be an address");
  parse_allowed_origins(web_allowed_origins);  // throws naming the key and the bad entry
  require(max_connections >= 1, "max_connections", "must be >= 1");
  require(max_connections_per_address >= 1, "max_connections_per_address", "must be >= 1");
  require(max_write_queue_bytes >= 4096, "max_write_queue_bytes", "must be >= 4096");
  require(log_lines_per_minute >= 1, "log_lines_per_minute", "must be >= 1");
  require(monitor_save_interval_s >= 0, "monitor_save_interval_s", "must be >= 0");
  require(monitor_work_share > 0 && monitor_work_share <= 1, "monitor_work_share",
          "must be in (0, 1]");
  require(legacy_push_after_s > 0, "legacy_push_after_s", "must be > 0");
  require(web_max_connections >= 1 && web_max_connections <= 100000, "web_max_connections",
          "must be in 1..100000");
  require(web_max_connections_per_address >= 1 &&
              web_max_connections_per_address <= web_max_connections,
          "web_max_connections_per_address", "must be in 1..web_max_connections");
  require(web_header_timeout_s > 0 && web_header_timeout_s <= 300, "web_header_timeout_s",
          "must be in (0, 300]");
  require(fd_reserve >= 0 && fd_reserve <= 100000, "fd_reserve", "must be in 0..100000");
  require(log_lines_per_kind >= 1 && log_lines_per_kind <= 1000000, "log_lines_per_kind",
          "must be in 1..1000000");
  require(record_max_bytes >= (int64_t{1} << 20), "record_max_bytes", "must be >= 1048576");
  require(robot_report_interval_s >= 0 && robot_report_interval_s <= 86400,
          "robot_report_interval_s", "must be in 0..86400 (0 = off)");
  require(record_max_sessions >= 1 && record_max_sessions <= 1000000, "record_max_sessions",
          "must be in 1..1000000");
  require(brain.is_object(), "brain", "must be an object");
  robots.validate();
  cluster.validate();
}

ServerConfig load_server_config(const std::string& path) {
  const nlohmann::json j = config::parse_json_file(path);  // names the line and column
  try {
    return j.get<ServerConfig>();
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace fieldbrain::server
