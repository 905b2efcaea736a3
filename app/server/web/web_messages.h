// The JSON messages the web monitor pushes over its WebSocket (docs/web-monitor.md lists
// them), built from what the brain worker and the server counters report. Pure functions
// plus one small rate tracker, so they are testable without sockets.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "app/server/worker/brain_worker.h"

namespace fieldbrain::server::web {

// Server-wide numbers for the totals strip.
struct WebTotals {
  uint64_t brain_calls = 0;
  uint64_t robot_cycles = 0;  // robot-cycles stepped (brain_calls x robots per call)
  uint64_t saves = 0;
  uint64_t errors = 0;
  uint64_t web_dropped = 0;  // updates the web clients lost to their bounded queues
  size_t web_clients = 0;
  double uptime_s = 0;
};

// Cycles per second per robot key, from successive (cycle, time) snapshots: smoothed so a
// 4 Hz refresh does not flicker, and forgotten when the robot is gone.
class CycleRates {
 public:
  struct Entry {
    int64_t cycle = 0;
    double at = 0;
    double rate = 0;
    double last_advance = 0;  // when the cycle last moved
  };
  // Updates every listed robot; returns the entries by key.
  const std::map<std::string, Entry>& update(const std::vector<RobotView>& robots, double now);

 private:
  std::map<std::string, Entry> entries_;
};

// A robot is "cycling" if its cycle moved within this many seconds, "idle" otherwise.
constexpr double kIdleAfterS = 1.0;
// A refused handshake stays on the page this long.
constexpr double kRefusedShownS = 60.0;

// {"type":"robots","robots":[...],"totals":{...},"resolution":R}. `errors_by_source` is
// ServerStats::errors_by_source(): errors under a robot's key are its bad frames; a source
// whose last error is a refused handshake (and that is not connected) is listed as refused.
nlohmann::json robots_message(const std::vector<RobotView>& robots,
                              const std::map<std::string, CycleRates::Entry>& rates,
                              const nlohmann::json& errors_by_source, const WebTotals& totals,
                              int64_t resolution, double now);

// The compact plot point for one telemetry line of BrainWorker's publisher:
// {"type":"telemetry","robot":key,"cycle":n,"motors":[..],"reward":r,"confidence":c,
// "novelty":v,"latency_ms":l}. Empty when the line is not a telemetry object.
std::optional<nlohmann::json> telemetry_point(const std::string& line);

// {"type":"field","robot":key,"channel":c,"z":z,"resolution":R,"values":[R*R row-major]}
// from BrainEngine::field_slice's {"values":[[..]..]}.
nlohmann::json field_message(const std::string& robot, const nlohmann::json& slice);

// A control message from the page: {"type":"select","robot":key,"channel":c,"z":z}.
struct Selection {
  std::string robot;  // empty: nothing selected yet
  int64_t channel = 0;
  int64_t z = -1;  // -1: the middle slice
  bool operator<(const Selection& o) const {
    return std::tie(robot, channel, z) < std::tie(o.robot, o.channel, o.z);
  }
};
// Throws std::invalid_argument with a readable reason on anything else.
Selection parse_selection(const std::string& text);

}  // namespace fieldbrain::server::web
