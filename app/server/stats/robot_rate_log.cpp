#include "app/server/stats/robot_rate_log.h"

#include <fmt/format.h>

#include <algorithm>

namespace fieldbrain::server {

bool RobotRateLog::observe(double latency_ms, Clock::time_point now, Clock::duration interval) {
  if (interval <= Clock::duration::zero()) return false;
  if (!started_) {
    started_ = true;
    begin_ = now;
  }
  ++replies_;
  sum_ms_ += latency_ms;
  max_ms_ = std::max(max_ms_, latency_ms);
  if (now - begin_ < interval) return false;
  last_.replies = replies_;
  last_.seconds = std::chrono::duration<double>(now - begin_).count();
  last_.mean_ms = sum_ms_ / static_cast<double>(replies_);
  last_.max_ms = max_ms_;
  begin_ = now;
  replies_ = 0;
  sum_ms_ = 0;
  max_ms_ = 0;
  return true;
}

std::string robot_rate_line(const std::string& robot, const RobotRateLog::Window& w) {
  return fmt::format(
      "{}: {} cycles in the last {:.0f} s ({:.1f}/s), reply latency mean {:.1f} ms, max {:.1f} ms",
      robot, w.replies, w.seconds, w.seconds > 0 ? w.replies / w.seconds : 0.0, w.mean_ms,
      w.max_ms);
}

}  // namespace fieldbrain::server
