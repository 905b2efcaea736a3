#include "app/server/worker/latency_watch.h"

#include <fmt/format.h>

#include <algorithm>

namespace fieldbrain::server {
namespace {

// Smoothing weight of the newest reply: about the last ten replies count.
constexpr double kNewest = 0.2;
// Replies before the first verdict: a new brain's first cycles (allocations, a graph capture)
// are slow once and say nothing about the loop.
constexpr uint64_t kWarmupReplies = 10;

}  // namespace

bool LatencyWatch::observe(double latency_ms, Clock::time_point now) {
  last_ms_ = latency_ms;
  smoothed_ms_ = replies_ == 0 ? latency_ms : (1 - kNewest) * smoothed_ms_ + kNewest * latency_ms;
  ++replies_;
  over_ = budget_ms_ > 0 && replies_ > kWarmupReplies && smoothed_ms_ > budget_ms_;
  if (!over_) return false;
  uint64_t occurrences = 0;
  if (!log_.due(now, &occurrences)) return false;
  slow_replies_ = occurrences;
  return true;
}

std::string slow_robot_warning(const std::string& robot, const LatencyWatch& watch,
                               int64_t resolution, size_t robots) {
  // A cycle costs ~R^3: three quarters of R (a multiple of 4, at least 4) costs ~42%.
  const int64_t lower = std::max<int64_t>(4, resolution * 3 / 4 / 4 * 4);
  const double r3 = std::max<double>(1.0, double(resolution) * resolution * resolution);
  return fmt::format(
      "robot {}: replies take {:.0f} ms (last {:.0f} ms; {} slow since the last warning), over its "
      "{:g} ms loop budget ({}): it acts on stale motors. Lower the "
      "resolution (now R = {}; --resolution {} costs {:.0f}% of it), serve fewer robots ({} "
      "connected) or run the "
      "brain on a GPU (docs/gpu.md)",
      robot, watch.smoothed_ms(), watch.last_ms(), watch.slow_replies(), watch.budget_ms(),
      watch.budget_key(), resolution, lower, 100.0 * lower * lower * lower / r3, robots);
}

}  // namespace fieldbrain::server
