// A per-connection log rate limit: a client that sends garbage as fast as it can must not
// write the log as fast as it can. Each connection may log `per_minute` lines in any minute
// (a token bucket with that burst); lines past it are counted, not written, and the count is
// reported in one line when logging is allowed again (or when the connection closes).
#pragma once

#include <chrono>
#include <cstdint>

namespace fieldbrain::server {

class LogBudget {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LogBudget(int per_minute) : per_minute_(per_minute), tokens_(per_minute) {}

  // True when this line may be written now. `suppressed` receives the number of lines that
  // were held back since the last allowed one (report it with the line), then resets.
  bool allow(Clock::time_point now, uint64_t* suppressed);
  // Lines held back and not yet reported (for a final note at close).
  uint64_t pending_suppressed() const { return suppressed_; }

 private:
  int per_minute_;
  double tokens_;
  Clock::time_point last_{};
  bool started_ = false;
  uint64_t suppressed_ = 0;
};

}  // namespace fieldbrain::server

namespace fieldbrain::server {

// A server-wide event that may repeat thousands of times a second (accept failing with
// EMFILE, connections refused by a cap): logged at most once per interval, with the number
// of occurrences since the last line.
class IntervalLog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit IntervalLog(Clock::duration interval) : interval_(interval) {}
  // True when a line is due; `occurrences` receives the events since the last line (this one
  // included).
  bool due(Clock::time_point now, uint64_t* occurrences) {
    ++count_;
    if (logged_once_ && now - last_ < interval_) return false;
    logged_once_ = true;
    last_ = now;
    *occurrences = count_;
    count_ = 0;
    return true;
  }

 private:
  Clock::duration interval_;
  Clock::time_point last_{};
  bool logged_once_ = false;
  uint64_t count_ = 0;
};

}  // namespace fieldbrain::server
