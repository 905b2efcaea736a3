#include "app/server/protocol/monitor_envelope.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <sstream>

#include "app/server/protocol/printable.h"
#include "app/server/protocol/wall_clock.h"

namespace fieldbrain::server {
namespace {

// Requests come from the network: never let invalid UTF-8 throw while encoding a reply.
std::string line_of(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The request echoed in a reply: escaped and cut, so a 1 MB request is not answered with a
// 2 MB reply.
std::string echo(const std::string& request) { return printable(request, 200); }

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
                  {"request", echo(request)},
                  {"timestamp", epoch_seconds()},
                  {"data", data}});
}

std::string monitor_pong(const std::string& request, double uptime_s) {
  return line_of({{"status", "success"},
                  {"request", echo(request)},
                  {"timestamp", epoch_seconds()},
                  {"message", "pong"},
                  {"server_uptime", uptime_s}});
}

std::string monitor_error(const std::string& request, const std::string& error) {
  return line_of({{"status", "error"},
                  {"request", echo(request)},
                  {"error", error},
                  {"timestamp", epoch_seconds()}});
}

std::string monitor_unknown(const std::string& request) {
  return line_of({{"status", "error"},
                  {"request", echo(request)},
                  {"error", "Unknown command: " + echo(request)},
                  {"timestamp", epoch_seconds()},
                  {"available_commands", monitor_commands()}});
}

std::string monitor_not_found(const std::string& request, const std::string& id) {
  return line_of({{"status", "error"},
                  {"request", echo(request)},
                  {"message", "Session " + echo(id) + " not found or has no telemetry"}});
}

const std::string& TelemetryPush::legacy_line() const {
  if (legacy_.empty()) {
    const auto j = nlohmann::json::parse(line_, nullptr, /*allow_exceptions=*/false);
    legacy_ = legacy_push_line(j.is_object() ? j : nlohmann::json::object());
  }
  return legacy_;
}

std::string legacy_push_line(const nlohmann::json& telemetry) {
  nlohmann::json out = telemetry;
  auto number = [&](const char* key, double fallback) {
    auto it = telemetry.find(key);
    return it != telemetry.end() && it->is_number() ? it->get<double>() : fallback;
  };
  // Service metrics that generation merged into every line.
  const double cycle_ms = number("avg_cycle_ms", 0.0);
  out["cycles"] = static_cast<int64_t>(number("cycles", number("cycle", 0.0)));
  out["hz"] = cycle_ms > 0 ? 1000.0 / cycle_ms : 0.0;
  out["energy"] = number("field_information", 0.0);
  out["field_energy"] = number("field_information", 0.0);
  if (!out.contains("comfort")) out["comfort"] = 0;
  if (!out.contains("motivation")) out["motivation"] = "unknown";
  if (!out.contains("exploring")) out["exploring"] = number("exploration_drive", 0.0) > 0.5;
  // The enhanced brain's progress keys, from our nearest equivalents.
  out["prediction_accuracy"] = number("prediction_confidence", 0.0);
  out["learning_score"] = number("smoothed_confidence", 0.0);
  out["exploration_rate"] = number("exploration_drive", 0.0);
  out["concepts_formed"] = number("attractors", 0.0);
  if (!out.contains("causal_chains")) out["causal_chains"] = 0;
  if (!out.contains("semantic_meanings")) out["semantic_meanings"] = 0;
  if (!out.contains("uptime")) out["uptime"] = 0.0;
  auto motors = telemetry.find("motors");
  if (motors != telemetry.end() && motors->is_array() && motors->size() > 5) {
    out["motors"] = nlohmann::json(motors->begin(), motors->begin() + 5);
  }
  if (!out.contains("motors")) out["motors"] = nlohmann::json::array();
  if (!out.contains("sensors")) out["sensors"] = nlohmann::json::array();
  return line_of(out);
}

}  // namespace fieldbrain::server
