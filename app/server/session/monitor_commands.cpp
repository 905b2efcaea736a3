#include "app/server/session/monitor_commands.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

namespace fieldbrain::server {
namespace {

using nlohmann::json;

json brain_dimensions(BrainWorker& w) {
  const json d = w.engine().describe();
  return d.value("field_shape", json::array());
}

double now_epoch() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string brain_stats(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  const auto robots = w.robots();
  const double now = now_epoch();
  json sessions = json::object();
  for (const auto& r : robots) {
    sessions[r.key] = {{"robot_type", r.framing},
                       {"robot_id", r.key},
                       {"brain_dimensions", brain_dimensions(w)},
                       {"sensory_dim", r.sensory_dim},
                       {"motor_dim", r.motor_dim},
                       {"cycles_processed", r.cycle},
                       {"total_experiences", r.session_cycles},
                       {"average_cycle_time_ms", r.avg_cycle_ms},
                       {"uptime_seconds", now - r.connected_at},
                       {"created_at", r.connected_at}};
  }
  return monitor_success(q.cmd.text, {{"sessions", sessions}, {"total_sessions", robots.size()}});
}

std::string session_info(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  const double now = now_epoch();
  json list = json::array();
  for (const auto& r : w.robots()) {
    list.push_back({{"session_id", r.key},
                    {"robot_type", r.framing},
                    {"brain_dimensions", brain_dimensions(w)},
                    {"cycles", r.cycle},
                    {"experiences", r.session_cycles},
                    {"avg_cycle_ms", r.avg_cycle_ms},
                    {"uptime", now - r.connected_at}});
  }
  return monitor_success(q.cmd.text, list);
}

std::string active_brains(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  const json d = w.engine().describe();
  json list = json::array();
  for (const auto& r : w.robots()) {
    list.push_back({{"profile", r.key},
                    {"field_dimensions", d.value("field_shape", json::array())},
                    {"sensory_dim", r.sensory_dim},
                    {"motor_dim", r.motor_dim},
                    {"spatial_resolution", d.value("resolution", 0)},
                    {"device", d.value("device", "cpu")},
                    {"cycle", r.cycle},
                    {"brain", d}});  // the engine's own description (profile, R, device, ...)
  }
  return monitor_success(q.cmd.text, list);
}

std::string performance_metrics(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  const auto robots = w.robots();
  int64_t total_cycles = 0, experiences = 0;
  for (const auto& r : robots) {
    total_cycles += r.cycle;
    experiences += r.session_cycles;
  }
  const uint64_t calls = w.brain_calls(), frames = w.frames_stepped();
  return monitor_success(
      q.cmd.text, {{"total_cycles", total_cycles},
                   {"total_experiences", experiences},
                   {"active_sessions", robots.size()},
                   {"average_cycle_time_ms", frames ? 1000.0 * w.brain_seconds() / frames : 0.0},
                   {"monitoring_clients", q.monitor_clients},
                   {"brain_calls", calls},
                   {"robot_cycles", frames},
                   {"robots_per_brain_call", calls ? double(frames) / calls : 0.0},
                   {"saves", w.saves()},
                   {"subscriber_lines_dropped", q.stats.subscriber_drops()},
                   {"total_messages", q.stats.total_messages()}});
}

// `telemetry` (every robot) or `telemetry <robot_id>`.
std::string telemetry(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  if (!q.cmd.args.empty()) {
    const RobotView* r = w.robot_by_key(q.cmd.args[0]);
    if (!r) return monitor_not_found(q.cmd.text, q.cmd.args[0]);
    return monitor_success(q.cmd.text, w.engine().telemetry(w.slot_of(r->id)));
  }
  json all = json::object();
  for (const auto& r : w.robots()) all[r.key] = w.engine().telemetry(w.slot_of(r.id));
  return monitor_success(q.cmd.text, all);
}

std::string prediction_metrics(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  json list = json::array();
  for (const auto& r : w.robots()) {
    const json t = w.engine().telemetry(w.slot_of(r.id));
    list.push_back({{"session_id", r.key},
                    {"current_confidence", t.value("prediction_confidence", json())},
                    {"last_prediction_error", t.value("prediction_error", json())},
                    {"improvement_rate", t.value("improvement_rate", json())},
                    {"confidence_history_length", r.cycle}});
  }
  return monitor_success(q.cmd.text, list);
}

// The session has applied the server-wide rate limit (monitor_save_interval_s) already.
std::string save(const MonitorQuery& q) { return monitor_success(q.cmd.text, q.worker.save_all()); }

// `field_slice <robot_id> <channel> <z>`.
std::string field_slice(const MonitorQuery& q) {
  BrainWorker& w = q.worker;
  const MonitorCommand& cmd = q.cmd;
  if (cmd.args.size() != 3) {
    return monitor_error(cmd.text, "usage: field_slice <robot_id> <channel> <z>");
  }
  const RobotView* r = w.robot_by_key(cmd.args[0]);
  if (!r) return monitor_not_found(cmd.text, cmd.args[0]);
  int64_t channel = 0, z = 0;
  try {
    channel = std::stoll(cmd.args[1]);
    z = std::stoll(cmd.args[2]);
  } catch (const std::exception&) {
    return monitor_error(cmd.text, "channel and z must be integers");
  }
  try {
    return monitor_success(cmd.text, w.engine().field_slice(w.slot_of(r->id), channel, z));
  } catch (const std::exception& e) {
    return monitor_error(cmd.text, e.what());
  }
}

}  // namespace

MonitorAnswer brain_command(const std::string& name) {
  static const std::map<std::string, MonitorAnswer> table = {
      {"brain_stats", brain_stats},
      {"session_info", session_info},
      {"active_brains", active_brains},
      {"performance_metrics", performance_metrics},
      {"telemetry", telemetry},
      {"prediction_metrics", prediction_metrics},
      {"save", save},
      {"field_slice", field_slice},
  };
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace fieldbrain::server
