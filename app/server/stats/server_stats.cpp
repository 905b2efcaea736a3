#include "app/server/stats/server_stats.h"

#include <spdlog/spdlog.h>

#include "app/server/protocol/handshake.h"
#include "app/server/protocol/wall_clock.h"

namespace fieldbrain::server {

ServerStats::ServerStats(int log_lines_per_kind)
    : log_gate_(log_lines_per_kind), start_(std::chrono::steady_clock::now()) {}

void ServerStats::connection_opened() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++tcp_connections_;
  ++active_connections_;
}

void ServerStats::connection_closed() {
  std::lock_guard<std::mutex> lock(mutex_);
  --active_connections_;
}

void ServerStats::handshake_done() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++total_connections_;
}

void ServerStats::sensory_frame() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++total_messages_;
}

void ServerStats::reward_dropped(const std::string& robot) {
  if (rewards_dropped_.fetch_add(1) != 0) return;
  spdlog::warn(
      "robot {} sends rewards, but brain.legacy_reward is \"drop\": the legacy profile passes "
      "none to the brain (as em-brain's own server never did). --legacy-reward append gives "
      "them to it; fieldbrain_rewards_dropped_total on /metrics counts the rewards dropped "
      "(this line is written once)",
      robot);
}

void ServerStats::error(int code, const std::string& who, const std::string& message, bool log) {
  if (log && log_gate_.allow(std::to_string(code) + " " + error_code_name(code))) {
    spdlog::warn("[{} {}] {}: {}", code, error_code_name(code), who, message);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ++total_errors_;
  ++by_code_[code];
  ++by_category_[error_category_name(code)];
  recent_.push_back({{"timestamp", epoch_seconds()},
                     {"client_id", who},
                     {"error", true},
                     {"code", code},
                     {"code_name", error_code_name(code)},
                     {"category", error_category_name(code)},
                     {"message", message},
                     {"details", nlohmann::json::object()}});
  if (recent_.size() > 10) recent_.pop_front();
  if (!by_source_.count(who) && by_source_.size() >= kMaxErrorSources) {
    // Bounded: forget the source whose last error is oldest.
    auto oldest = by_source_.begin();
    for (auto it = by_source_.begin(); it != by_source_.end(); ++it) {
      if (it->second.last_at < oldest->second.last_at) oldest = it;
    }
    by_source_.erase(oldest);
  }
  SourceErrors& src = by_source_[who];
  ++src.count;
  src.last_code = code;
  src.last_at = epoch_seconds();
}

void ServerStats::subscriber_drop() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++subscriber_drops_;
}

uint64_t ServerStats::subscriber_drops() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return subscriber_drops_;
}

nlohmann::json ServerStats::errors_by_source() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [who, e] : by_source_) {
    out[who] = {{"count", e.count}, {"code", e.last_code}, {"at", e.last_at}};
  }
  return out;
}

uint64_t ServerStats::total_errors() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_errors_;
}

uint64_t ServerStats::errors_with_code(int code) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_code_.find(code);
  return it == by_code_.end() ? 0 : it->second;
}

uint64_t ServerStats::total_messages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_messages_;
}

double ServerStats::uptime_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

nlohmann::json ServerStats::connection_stats_json() const {
  const double up = uptime_s();
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json by_code = nlohmann::json::object();
  for (const auto& [code, n] : by_code_) by_code[error_code_name(code)] = n;
  nlohmann::json recent = nlohmann::json::array();
  for (const auto& e : recent_) recent.push_back(e);
  return {{"uptime_seconds", up},
          {"total_connections", total_connections_},
          {"tcp_connections", tcp_connections_},
          {"active_connections", active_connections_},
          {"total_messages", total_messages_},
          {"messages_per_second", up > 0 ? total_messages_ / up : 0.0},
          {"active_sessions", nlohmann::json::array()},
          {"error_stats",
           {{"total_errors", total_errors_},
            {"by_code", by_code},
            {"by_category", by_category_},
            {"recent_errors", recent}}}};
}

}  // namespace fieldbrain::server
