// The periodic per-robot line (issue 40 item 5): every robot_report_interval_s (a minute by
// default) each connected robot's cycles per second and reply latency over that window,
//   "picarx_12s_6m: 1187 cycles in the last 60 s (19.8/s), reply latency mean 4.1 ms, max 38.0 ms"
// so a log reader sees a robot's pace while it runs, not only the total at its release. The
// lines pass the server-wide log budget of their kind (log_gate.h), so a fleet of robots
// writes at most log_lines_per_kind of them a minute. One thread (the brain worker's).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace fieldbrain::server {

class RobotRateLog {
 public:
  using Clock = std::chrono::steady_clock;
  struct Window {
    uint64_t replies = 0;
    double seconds = 0;
    double mean_ms = 0;
    double max_ms = 0;
  };

  // One reply's latency. True when the window that began with this robot's first reply (or the
  // previous line) is `interval` old: last_window() then describes it and a new one begins.
  // An interval <= 0 turns the line off (never true).
  bool observe(double latency_ms, Clock::time_point now, Clock::duration interval);
  const Window& last_window() const { return last_; }

 private:
  bool started_ = false;
  Clock::time_point begin_{};
  uint64_t replies_ = 0;
  double sum_ms_ = 0;
  double max_ms_ = 0;
  Window last_;
};

std::string robot_rate_line(const std::string& robot, const RobotRateLog::Window& window);

}  // namespace fieldbrain::server
