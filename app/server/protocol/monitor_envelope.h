// The monitor port's text protocol (docs/protocol.md, legacy §4.1), minus the sockets: the welcome
// line, the command parser, and the legacy reply envelope. One compact JSON object per line
// (ef2bdb8 pretty-printed; docs/protocol.md asks for one object per line).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fieldbrain::server {

// The ten legacy entries of ef2bdb8's welcome (with "telemetry <session_id>") plus ours.
const std::vector<std::string>& monitor_commands();

struct MonitorCommand {
  std::string name;               // lower-cased first word ("" for a blank line)
  std::vector<std::string> args;  // the remaining words, as sent
  std::string text;               // the whole request, trimmed (echoed as "request")
};

MonitorCommand parse_monitor_command(const std::string& line);

// {"status":"connected","server":...,"version":...,"commands":[...]}\n
std::string monitor_welcome_line();

// {"status":"success","request":..,"timestamp":..,"data":..}\n
std::string monitor_success(const std::string& request, const nlohmann::json& data);
// ping: {"status":"success","request":..,"timestamp":..,"message":"pong","server_uptime":s}\n
std::string monitor_pong(const std::string& request, double uptime_s);
// {"status":"error","request":..,"error":..,"timestamp":..}\n
std::string monitor_error(const std::string& request, const std::string& error);
// The unknown-command reply, listing the available commands.
std::string monitor_unknown(const std::string& request);
// telemetry <id> for an unknown id: legacy shape, with "message" and no timestamp.
std::string monitor_not_found(const std::string& request, const std::string& id);

// One published telemetry line (the worker's compact JSON for one robot's cycle) in the two
// push formats: as is for `subscribe` clients, and in the 2025-08-20 push format
// for clients of that generation, which never send a request. The
// second form is built once, on first use, and shared by every such client.
class TelemetryPush {
 public:
  TelemetryPush(int64_t cycle, std::string line) : cycle_(cycle), line_(std::move(line)) {}
  int64_t cycle() const { return cycle_; }
  const std::string& line() const { return line_; }  // with its '\n'
  const std::string& legacy_line() const;            // with its '\n'

 private:
  int64_t cycle_;
  std::string line_;
  mutable std::string legacy_;
};

// The 2025-08-20 form of one telemetry object: every key of ours kept, the keys that
// generation's monitors read (monitor.py, monitor_brain_progress.py) added from their nearest
// equivalents, motors cut to the first 5 as that server did. One line with its '\n'.
std::string legacy_push_line(const nlohmann::json& telemetry);

}  // namespace fieldbrain::server
