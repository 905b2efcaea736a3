#include "app/server/web/web_messages.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "app/server/protocol/handshake.h"

namespace fieldbrain::server::web {

using nlohmann::json;

const std::map<std::string, CycleRates::Entry>& CycleRates::update(
    const std::vector<RobotView>& robots, double now) {
  std::map<std::string, Entry> next;
  for (const RobotView& r : robots) {
    Entry e;
    auto it = entries_.find(r.key);
    if (it == entries_.end() || r.cycle < it->second.cycle) {
      e = {r.cycle, now, 0.0, now};
    } else {
      e = it->second;
      const double dt = now - e.at;
      if (dt > 0) {
        const double instant = static_cast<double>(r.cycle - e.cycle) / dt;
        // The first measured interval is taken as is; later ones are smoothed.
        e.rate = e.rate == 0 ? instant : 0.6 * e.rate + 0.4 * instant;
      }
      if (r.cycle != e.cycle) e.last_advance = now;
      e.cycle = r.cycle;
      e.at = now;
    }
    next[r.key] = e;
  }
  entries_.swap(next);
  return entries_;
}

json robots_message(const std::vector<RobotView>& robots,
                    const std::map<std::string, CycleRates::Entry>& rates,
                    const json& errors_by_source, const WebTotals& totals, int64_t resolution,
                    double now) {
  json list = json::array();
  auto errors_of = [&](const std::string& who) -> uint64_t {
    auto it = errors_by_source.find(who);
    return it == errors_by_source.end() ? 0 : it->value("count", uint64_t{0});
  };
  for (const RobotView& r : robots) {
    auto rate = rates.find(r.key);
    const bool cycling =
        rate != rates.end() && r.session_cycles > 0 && now - rate->second.last_advance < kIdleAfterS;
    list.push_back({{"key", r.key},
                    {"framing", r.framing},
                    {"sensory_dim", r.sensory_dim},
                    {"motor_dim", r.motor_dim},
                    {"cycle", r.cycle},
                    {"session_cycles", r.session_cycles},
                    {"rate", rate == rates.end() ? 0.0 : rate->second.rate},
                    {"latency_ms", r.last_latency_ms},
                    {"latency_smoothed_ms", r.latency_smoothed_ms},
                    {"loop_budget_ms", r.loop_budget_ms},
                    {"over_budget", r.over_budget},
                    {"brain_ms", r.avg_cycle_ms},
                    {"bad_frames", errors_of(r.key)},
                    {"state", cycling ? "cycling" : "idle"}});
  }
  for (auto it = errors_by_source.begin(); it != errors_by_source.end(); ++it) {
    const bool connected = std::any_of(robots.begin(), robots.end(),
                                       [&](const RobotView& r) { return r.key == it.key(); });
    if (connected || it->value("code", 0) != kCodeInvalidCapabilities) continue;
    if (now - it->value("at", 0.0) > kRefusedShownS) continue;
    list.push_back({{"key", it.key()},
                    {"framing", ""},
                    {"cycle", 0},
                    {"rate", 0.0},
                    {"bad_frames", it->value("count", uint64_t{0})},
                    {"state", "refused"}});
  }
  const double per_call =
      totals.brain_calls ? static_cast<double>(totals.robot_cycles) / totals.brain_calls : 0.0;
  return {{"type", "robots"},
          {"time", now},
          {"resolution", resolution},
          {"robots", list},
          {"totals",
           {{"robots", robots.size()},
            {"brain_calls", totals.brain_calls},
            {"robot_cycles", totals.robot_cycles},
            {"robots_per_call", per_call},
            {"saves", totals.saves},
            {"errors", totals.errors},
            {"web_dropped", totals.web_dropped},
            {"web_clients", totals.web_clients},
            {"uptime_s", totals.uptime_s}}}};
}

std::optional<json> telemetry_point(const std::string& line) {
  const json t = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!t.is_object() || !t.contains("robot_id") || !t["robot_id"].is_string()) return {};
  auto number = [&](const char* key) -> json {
    auto it = t.find(key);
    return it != t.end() && it->is_number() ? *it : json();
  };
  json motors = t.value("motors", json::array());
  if (!motors.is_array()) motors = json::array();
  return json{{"type", "telemetry"},
              {"robot", t["robot_id"]},
              {"cycle", number("cycles")},
              {"motors", motors},
              {"reward", number("reward")},
              {"confidence", number("prediction_confidence")},
              {"novelty", number("novelty")},
              {"latency_ms", number("latency_ms")},
              {"over_budget", t.contains("over_budget") && t["over_budget"].is_boolean() &&
                                  t["over_budget"].get<bool>()}};
}

json field_message(const std::string& robot, const json& slice) {
  std::vector<float> flat;
  const json& rows = slice.at("values");
  for (const json& row : rows) {
    for (const json& v : row) flat.push_back(v.is_number() ? v.get<float>() : 0.0f);
  }
  return {{"type", "field"},
          {"robot", robot},
          {"channel", slice.value("channel", 0)},
          {"z", slice.value("z", 0)},
          {"resolution", slice.value("resolution", static_cast<int64_t>(rows.size()))},
          {"values", flat}};
}

Selection parse_selection(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw std::invalid_argument("a control message must be a JSON object");
  if (j.value("type", "") != "select") {
    throw std::invalid_argument("unknown control message type (expected \"select\")");
  }
  Selection s;
  auto robot = j.find("robot");
  if (robot == j.end() || !robot->is_string() || robot->get<std::string>().size() > 256) {
    throw std::invalid_argument("\"robot\" must be a robot key");
  }
  s.robot = robot->get<std::string>();
  auto channel = j.find("channel");
  if (channel != j.end()) {
    if (!channel->is_number_integer() || *channel < 0 || *channel > 63) {
      throw std::invalid_argument("\"channel\" must be an integer in 0..63");
    }
    s.channel = *channel;
  }
  auto z = j.find("z");
  if (z != j.end()) {
    if (!z->is_number_integer() || *z < -1 || *z > 1023) {
      throw std::invalid_argument("\"z\" must be an integer slice index (-1 = middle)");
    }
    s.z = *z;
  }
  return s;
}

}  // namespace fieldbrain::server::web
