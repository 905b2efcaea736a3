// The server-wide log budget per message kind (issue 24 item 5). The per-connection budget
// (log_budget.h) stops one client from writing the log as fast as it sends; this one stops
// many clients together: 2,000 connections with one bad message each, handshake time-outs,
// monitor and web requests without a token, failed saves. Each kind (an error code, or a name
// such as "web_401") may write `per_minute` lines in any minute (a token bucket with that
// burst); lines past it are counted: the first one held back says so at once, then one line
// per kind every 10 s says how many more were suppressed. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace fieldbrain::server {

class LogGate {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kReportEvery = std::chrono::seconds(10);

  explicit LogGate(int per_minute) : per_minute_(per_minute) {}

  // True when a line of `kind` may be written now. Also writes the "suppressed" lines that
  // are due (of every kind), so a flood reports itself while it lasts.
  bool allow(const std::string& kind, Clock::time_point now = Clock::now());
  // Writes the "suppressed" line of every kind with lines held back (call it now and then,
  // and at shutdown, so the last count of a flood that stopped is not lost).
  void report(Clock::time_point now = Clock::now(), bool force = false);
  // Lines held back and not yet reported, all kinds.
  uint64_t pending_suppressed() const;

 private:
  struct Kind {
    double tokens = 0;
    Clock::time_point last{};
    uint64_t suppressed = 0;
    bool announced = false;  // the "over its budget" line of this episode was written
  };
  void report_locked(Clock::time_point now, bool force);

  const int per_minute_;
  mutable std::mutex mutex_;
  std::map<std::string, Kind> kinds_;
  Clock::time_point last_report_{};
  bool reported_once_ = false;
};

}  // namespace fieldbrain::server
