#include "app/server/stats/connection_log.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace fieldbrain::server {

bool ConnectionLog::allow_own(const std::string& who) {
  uint64_t suppressed = 0;
  if (!budget_.allow(std::chrono::steady_clock::now(), &suppressed)) return false;
  if (suppressed > 0 && stats_.may_log("connection log lines suppressed")) {
    spdlog::warn("{}: {} log lines suppressed (log_lines_per_minute = {})", who, suppressed,
                 per_minute_);
  }
  return true;
}

bool ConnectionLog::allow(const std::string& kind, const std::string& who) {
  return allow_own(who) && stats_.may_log(kind);
}

void ConnectionLog::closing(const std::string& who) {
  const uint64_t held = budget_.pending_suppressed();
  if (held == 0 || !stats_.may_log("connection log lines suppressed")) return;
  spdlog::warn("{}: {} further log lines were suppressed (log_lines_per_minute = {})", who, held,
               per_minute_);
}

}  // namespace fieldbrain::server
