#include "app/server/stats/log_budget.h"

#include <algorithm>

namespace fieldbrain::server {

bool LogBudget::allow(Clock::time_point now, uint64_t* suppressed) {
  if (!started_) {
    started_ = true;
    last_ = now;
  }
  const double minutes = std::chrono::duration<double>(now - last_).count() / 60.0;
  last_ = now;
  tokens_ = std::min<double>(per_minute_, tokens_ + minutes * per_minute_);
  if (tokens_ < 1.0) {
    ++suppressed_;
    return false;
  }
  tokens_ -= 1.0;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

}  // namespace fieldbrain::server
