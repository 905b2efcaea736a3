// The monitor's share of the brain thread (issue 36 item 6b). Brain-state commands
// (telemetry, field_slice, brain_stats, ...) run on the brain worker between robot cycles: a
// monitor that sends them back to back made every robot cycle wait behind one (321 -> 91
// cycles/s). So all monitor connections together may keep the brain thread busy for at most
// `share` of the time (monitor_work_share): each command's measured cost on the worker moves
// the earliest start of the next one (any connection's) by cost / share. Commands are
// delayed, never refused; a connection reads its next line only after its reply, so a
// spamming client is simply slowed. Up to `kBurst` of unused time is kept as credit, so a
// person typing commands never waits. I/O thread only.
#pragma once

#include <algorithm>
#include <chrono>

namespace fieldbrain::server {

class MonitorWorkBudget {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kBurst = std::chrono::seconds(1);

  explicit MonitorWorkBudget(double share) : share_(share) {}

  // When the next command may go to the worker: `now` or later.
  Clock::time_point next_start(Clock::time_point now) const { return std::max(now, free_at_); }

  // A command kept the worker busy for `cost`.
  void spent(Clock::duration cost, Clock::time_point now) {
    const auto debt = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::chrono::duration<double>(cost).count() / share_));
    free_at_ = std::max(free_at_, now - std::chrono::duration_cast<Clock::duration>(kBurst)) + debt;
  }

 private:
  double share_;
  Clock::time_point free_at_{};
};

}  // namespace fieldbrain::server
