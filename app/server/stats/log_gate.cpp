#include "app/server/stats/log_gate.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace fieldbrain::server {

namespace {
// Kinds are few (error codes and a handful of names); a bound anyway, in case a caller ever
// passes something a client chose.
constexpr size_t kMaxKinds = 256;
}  // namespace

bool LogGate::allow(const std::string& kind, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  report_locked(now, false);
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) {
    if (kinds_.size() >= kMaxKinds) return false;
    it = kinds_.emplace(kind, Kind{static_cast<double>(per_minute_), now, 0}).first;
  }
  Kind& k = it->second;
  const double minutes = std::chrono::duration<double>(now - k.last).count() / 60.0;
  k.last = now;
  k.tokens = std::min<double>(per_minute_, k.tokens + std::max(0.0, minutes) * per_minute_);
  if (k.tokens < 1.0) {
    if (!k.announced) {
      k.announced = true;
      spdlog::warn(
          "'{}' log lines over the server-wide budget ({} a minute): suppressed, "
          "counted every 10 s",
          kind, per_minute_);
    }
    ++k.suppressed;
    return false;
  }
  k.tokens -= 1.0;
  k.announced = false;
  return true;
}

void LogGate::report(Clock::time_point now, bool force) {
  std::lock_guard<std::mutex> lock(mutex_);
  report_locked(now, force);
}

void LogGate::report_locked(Clock::time_point now, bool force) {
  if (!force && reported_once_ && now - last_report_ < kReportEvery) return;
  reported_once_ = true;
  last_report_ = now;
  for (auto& [kind, k] : kinds_) {
    if (k.suppressed == 0) continue;
    spdlog::warn("{} more '{}' log lines suppressed (server-wide log_lines_per_kind = {} a minute)",
                 k.suppressed, kind, per_minute_);
    k.suppressed = 0;
  }
}

uint64_t LogGate::pending_suppressed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t n = 0;
  for (const auto& [kind, k] : kinds_) n += k.suppressed;
  return n;
}

}  // namespace fieldbrain::server
