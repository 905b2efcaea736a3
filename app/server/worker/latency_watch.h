// The slow-robot warning: a robot whose replies come later than its control loop waits for
// them (robots.loop_budget_ms; a PiCar-X waits 50 ms and reads a later reply as the answer to
// its next request, so it acts on stale motors from then on). Per robot, the reply latency is
// smoothed over about ten replies so one slow cycle (a save, a busy neighbour) does not warn;
// the warning is logged at most once a minute per robot (IntervalLog, the server's log budget
// for repeating events), names the robot, the latency and what to do, and the flag it keeps
// reaches telemetry and the web page.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/server/stats/log_budget.h"

namespace fieldbrain::server {

class LatencyWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // budget_ms <= 0: never over budget, never warns. `budget_key` is the config key that set it
  // (named in the warning).
  LatencyWatch(double budget_ms, std::string budget_key,
               Clock::duration interval = std::chrono::minutes(1))
      : budget_ms_(budget_ms), budget_key_(std::move(budget_key)), log_(interval) {}

  // One reply's latency (frame queued for the brain -> its motors ready). True when a warning
  // is due now: the smoothed latency is over budget and this robot has not been warned about
  // within the interval.
  bool observe(double latency_ms, Clock::time_point now);

  double budget_ms() const { return budget_ms_; }
  const std::string& budget_key() const { return budget_key_; }
  double smoothed_ms() const { return smoothed_ms_; }
  double last_ms() const { return last_ms_; }
  bool over_budget() const { return over_; }
  // Over-budget replies since the previous warning, the one that made this warning due included.
  uint64_t slow_replies() const { return slow_replies_; }

 private:
  double budget_ms_;
  std::string budget_key_;
  IntervalLog log_;
  double smoothed_ms_ = 0;
  double last_ms_ = 0;
  uint64_t replies_ = 0;
  uint64_t slow_replies_ = 0;
  bool over_ = false;
};

// What a slow robot's operator can do depends on the brain it runs: the fieldbrain profile runs
// at any resolution and on a GPU; the legacy profile refuses a GPU and keeps parity with the
// original only at the resolutions it was checked at (docs/legacy.md: 16 and 32).
struct SpeedAdvice {
  int64_t resolution = 0;                    // the brain's R now
  bool gpu = true;                           // a GPU is a remedy
  std::vector<int64_t> parity_resolutions;   // non-empty: suggest only these
  // From BrainEngine::describe() ({"profile": ..., "resolution": ...}).
  static SpeedAdvice for_brain(const nlohmann::json& description);
};

// The warning line: "robot K: replies take 374 ms (last 866 ms), over its 50 ms loop budget
// (robots.loop_budget_ms) [...]: lower the resolution (now R = 32) ..., serve fewer robots (3
// connected) or run the brain on a GPU (docs/gpu.md)", each remedy only where `advice` has it.
std::string slow_robot_warning(const std::string& robot, const LatencyWatch& watch,
                               const SpeedAdvice& advice, size_t robots);

}  // namespace fieldbrain::server
