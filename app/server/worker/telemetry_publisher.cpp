#include "app/server/worker/telemetry_publisher.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "app/server/protocol/wall_clock.h"
#include "app/version/version.h"

namespace fieldbrain::server {

void TelemetryPublisher::set_publisher(Publish publish) {
  std::lock_guard<std::mutex> lock(mutex_);
  publish_ = std::move(publish);
}

void TelemetryPublisher::add_period(int64_t every_n) {
  std::lock_guard<std::mutex> lock(mutex_);
  periods_.insert(std::max<int64_t>(1, every_n));
}

void TelemetryPublisher::remove_period(int64_t every_n) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = periods_.find(std::max<int64_t>(1, every_n));
  if (it != periods_.end()) periods_.erase(it);
}

void TelemetryPublisher::publish_if_wanted(BrainEngine& engine, const ServerStats& stats,
                                           const RobotEntry& robot) {
  Publish publish;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!publish_ || periods_.empty()) return;
    bool wanted = false;
    for (int64_t n : periods_) {
      if (robot.view.cycle % n == 0) {
        wanted = true;
        break;
      }
    }
    if (!wanted) return;
    publish = publish_;
  }
  nlohmann::json line;
  try {
    line = engine.telemetry(*robot.slot);
    if (!line.is_object()) line = {{"brain", line}};
  } catch (const std::exception& e) {
    line = {{"telemetry_error", e.what()}};
  }
  const auto& v = robot.view;
  line["robot_id"] = v.key;
  line["cycles"] = v.cycle;
  line["timestamp"] = epoch_seconds();
  line["uptime"] = stats.uptime_s();
  line["avg_cycle_ms"] = v.avg_cycle_ms;
  const size_t ns = std::min<size_t>(16, v.last_sensors.size());
  line["sensors"] = std::vector<float>(v.last_sensors.begin(), v.last_sensors.begin() + ns);
  line["motors"] = v.last_motors;
  line["reward"] = v.last_reward;
  line["latency_ms"] = v.last_latency_ms;
  line["server_version"] = fieldbrain::version();
  line["latency_smoothed_ms"] = v.latency_smoothed_ms;
  line["loop_budget_ms"] = v.loop_budget_ms;
  line["over_budget"] = v.over_budget;
  publish(v.cycle, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace fieldbrain::server
