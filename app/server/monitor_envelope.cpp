#include "app/server/monitor_envelope.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <sstream>

#include "app/server/wall_clock.h"

namespace fieldbrain::server {
namespace {

// Requests come from the network: never let invalid UTF-8 throw while encoding a reply.
std::string line_of(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

const std::vector<std::string>& monitor_commands() {
  static const std::vector<std::string> commands = {"brain_stats",
                                                    "session_info",
                                                    "connection_stats",
                                                    "active_brains",
                                                    "performance_metrics",
                                                    "telemetry",
                                                    "telemetry <session_id>",
                                                    "prediction_metrics",
                                                    "ping",
                                                    "pattern_stats",
                                                    "save",
                                                    "field_slice <id> <channel> <z>",
                                                    "subscribe <every_n_cycles>"};
  return commands;
}

MonitorCommand parse_monitor_command(const std::string& line) {
  MonitorCommand cmd;
  size_t b = 0, e = line.size();
  while (b < e && std::isspace(static_cast<unsigned char>(line[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(line[e - 1]))) --e;
  cmd.text = line.substr(b, e - b);
  std::istringstream words(cmd.text);
  std::string word;
  if (words >> word) {
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    cmd.name = word;
    while (words >> word) cmd.args.push_back(word);
  }
  return cmd;
}

std::string monitor_welcome_line() {
  return line_of({{"status", "connected"},
                  {"server", "fieldbrain Monitoring Server"},
                  {"version", "2.0"},
                  {"commands", monitor_commands()}});
}

std::string monitor_success(const std::string& request, const nlohmann::json& data) {
  return line_of({{"status", "success"},
                  {"request", request},
                  {"timestamp", epoch_seconds()},
                  {"data", data}});
}

std::string monitor_pong(const std::string& request, double uptime_s) {
  return line_of({{"status", "success"},
                  {"request", request},
                  {"timestamp", epoch_seconds()},
                  {"message", "pong"},
                  {"server_uptime", uptime_s}});
}

std::string monitor_error(const std::string& request, const std::string& error) {
  return line_of({{"status", "error"},
                  {"request", request},
                  {"error", error},
                  {"timestamp", epoch_seconds()}});
}

std::string monitor_unknown(const std::string& request) {
  return line_of({{"status", "error"},
                  {"request", request},
                  {"error", "Unknown command: " + request},
                  {"timestamp", epoch_seconds()},
                  {"available_commands", monitor_commands()}});
}

std::string monitor_not_found(const std::string& request, const std::string& id) {
  return line_of({{"status", "error"},
                  {"request", request},
                  {"message", "Session " + id + " not found or has no telemetry"}});
}

}  // namespace fieldbrain::server
