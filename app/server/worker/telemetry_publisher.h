// The monitor's telemetry subscriptions: a line is computed only for the cycles some
// subscriber wants (a multiple of a subscribed period). Periods come and go on any thread;
// lines are built and published on the brain worker thread, after the robot's step.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_engine.h"
#include "app/server/worker/robot_entry.h"

namespace fieldbrain::server {

class TelemetryPublisher {
 public:
  // (cycle, the telemetry line as compact JSON), on the worker thread.
  using Publish = std::function<void(int64_t cycle, std::string line)>;

  void set_publisher(Publish publish);
  void add_period(int64_t every_n);
  void remove_period(int64_t every_n);

  // Worker thread: the robot's line, when its cycle is due for a subscriber.
  void publish_if_wanted(BrainEngine& engine, const ServerStats& stats, const RobotEntry& robot);

 private:
  std::mutex mutex_;
  Publish publish_;
  std::multiset<int64_t> periods_;
};

}  // namespace fieldbrain::server
