#include "app/server/worker/latency_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

SpeedAdvice SpeedAdvice::for_brain(const nlohmann::json& description) {
  SpeedAdvice advice;
  advice.resolution = description.value("resolution", int64_t{0});
  if (description.value("profile", std::string()) == "legacy") {
    advice.gpu = false;                   // the legacy profile runs on the CPU only
    advice.parity_resolutions = {16, 32};  // where parity with the original is checked
  }
  return advice;
}

namespace {

// "--resolution 24 costs 42% of it": a cycle costs ~R^3. The fieldbrain profile takes three
// quarters of R (a multiple of 4, at least 4); the legacy one the largest lower resolution
// parity was checked at, or none.
std::string lower_resolution_remedy(const SpeedAdvice& advice) {
  const int64_t R = advice.resolution;
  int64_t lower = 0;
  if (advice.parity_resolutions.empty()) {
    lower = std::max<int64_t>(4, R * 3 / 4 / 4 * 4);
  } else {
    for (int64_t r : advice.parity_resolutions) {
      if (r < R) lower = std::max(lower, r);
    }
  }
  if (lower <= 0 || lower >= R) return "";
  const double r3 = std::max<double>(1.0, double(R) * R * R);
  return fmt::format("lower the resolution (now R = {}; --resolution {} costs {:.0f}% of it{}), ",
                     R, lower, 100.0 * lower * lower * lower / r3,
                     advice.parity_resolutions.empty() ? "" : ", and parity is checked there");
}

}  // namespace

std::string slow_robot_warning(const std::string& robot, const LatencyWatch& watch,
                               const SpeedAdvice& advice, size_t robots) {
  const std::string last_remedy =
      advice.gpu ? "run the brain on a GPU (docs/gpu.md)"
                 : "serve it with the fieldbrain profile, which also runs on a GPU (the legacy "
                   "profile runs on the CPU only; docs/legacy.md)";
  std::string remedies = lower_resolution_remedy(advice) +
                         fmt::format("serve fewer robots ({} connected) or {}", robots, last_remedy);
  remedies[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(remedies[0])));
  return fmt::format(
      "robot {}: replies take {:.0f} ms (last {:.0f} ms; {} slow since the last warning), over its "
      "{:g} ms loop budget ({}): it acts on stale motors. {}",
      robot, watch.smoothed_ms(), watch.last_ms(), watch.slow_replies(), watch.budget_ms(),
      watch.budget_key(), remedies);
}

}  // namespace fieldbrain::server
