// Counters the monitor reports (connection_stats, performance_metrics) and the error log of
// docs/protocol.md, legacy §5.2: every error is logged once (spdlog) with the robot's id and
// counted here by code and category. Thread-safe: sessions (I/O thread) and the brain worker
// both record.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "app/server/stats/latency_histogram.h"
#include "app/server/stats/log_gate.h"

namespace fieldbrain::server {

class ServerStats {
 public:
  // `log_lines_per_kind`: the server-wide log budget of each error code and named kind.
  explicit ServerStats(int log_lines_per_kind = 20);

  void connection_opened();
  void connection_closed();
  void handshake_done();
  void sensory_frame();
  // Logs (warn) and counts one error. `who` is the robot key or the peer address, both
  // already printable. `log` false counts without writing (a connection over its log budget);
  // the server-wide budget of the code (log_gate.h) may hold the line back too.
  void error(int code, const std::string& who, const std::string& message, bool log = true);
  // The server-wide log budget, for lines that are not errors with a code ("web_401",
  // "monitor_token", ...): true when a line of `kind` may be written now.
  bool may_log(const std::string& kind) { return log_gate_.allow(kind); }
  // Writes the due "N more suppressed" lines (the server calls it every few seconds).
  void report_suppressed(bool force = false) {
    log_gate_.report(LogGate::Clock::now(), force);
  }

  // A telemetry line a slow subscriber lost (its bounded queue was full).
  void subscriber_drop();
  uint64_t subscriber_drops() const;

  // A non-zero reward the brain ignored (the legacy profile with brain.legacy_reward "drop"):
  // counted for /metrics (fieldbrain_rewards_dropped_total); the first one is logged, once per
  // server, naming the robot and the key that would pass rewards on.
  void reward_dropped(const std::string& robot);
  uint64_t rewards_dropped() const { return rewards_dropped_.load(); }

  uint64_t total_errors() const;
  // Errors per robot key or peer address (the web monitor's bad-frame count and "refused"):
  // {who: {"count":n,"code":last code,"at":epoch s}}, the most recent kMaxErrorSources only.
  nlohmann::json errors_by_source() const;
  uint64_t errors_with_code(int code) const;
  uint64_t total_messages() const;
  double uptime_s() const;

  // connection_stats' data object (§4.1).
  nlohmann::json connection_stats_json() const;

  // Reply latencies for /metrics (recorded by the brain worker; its own lock-free piece).
  LatencyHistogram& reply_latency() { return reply_latency_; }

 private:
  LogGate log_gate_;
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
  uint64_t total_connections_ = 0;  // successful handshakes
  uint64_t tcp_connections_ = 0;
  int64_t active_connections_ = 0;
  uint64_t total_messages_ = 0;
  uint64_t total_errors_ = 0;
  uint64_t subscriber_drops_ = 0;
  std::map<int, uint64_t> by_code_;
  std::map<std::string, uint64_t> by_category_;
  std::deque<nlohmann::json> recent_;  // last 10
  struct SourceErrors {
    uint64_t count = 0;
    int last_code = 0;
    double last_at = 0;
  };
  static constexpr size_t kMaxErrorSources = 256;
  std::map<std::string, SourceErrors> by_source_;
  LatencyHistogram reply_latency_;
  std::atomic<uint64_t> rewards_dropped_{0};
};

}  // namespace fieldbrain::server
