// One client connection's share of the log (issue 36 item 3). Every line a client can cause,
// on any port (robots, the monitor, the web monitor's WebSocket), passes two budgets: its
// connection's (log_budget.h, log_lines_per_minute), so one client cannot write the log as fast
// as it sends, and the server-wide budget of its kind (log_gate.h, log_lines_per_kind), so many
// clients together cannot either. Lines held back are counted and reported in a line of their
// own when logging is allowed again and at close. One thread (the connection's).
#pragma once

#include <string>

#include "app/server/stats/log_budget.h"
#include "app/server/stats/server_stats.h"

namespace fieldbrain::server {

class ConnectionLog {
 public:
  ConnectionLog(ServerStats& stats, int per_minute)
      : stats_(stats), budget_(per_minute), per_minute_(per_minute) {}

  // True when a line of `kind` about `who` may be written now (both budgets).
  bool allow(const std::string& kind, const std::string& who);
  // This connection's budget only, for ServerStats::error, which applies its code's
  // server-wide budget itself.
  bool allow_own(const std::string& who);
  // At close: says how many of this connection's lines were held back and not yet reported.
  void closing(const std::string& who);

 private:
  ServerStats& stats_;
  LogBudget budget_;
  int per_minute_;
};

}  // namespace fieldbrain::server
