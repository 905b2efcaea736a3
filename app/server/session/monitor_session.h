// One client of the monitor port: the welcome line, one command per line answered in order
// (brain facts are read on the brain worker, replies come back to the I/O thread), and two
// push modes: `subscribe <n>`, and the 2025-08-20 generation's push to clients that never
// send a request (legacy_push: after legacy_push_after_s of silence, every cycle, in that
// generation's format). Pushed lines sit in a bounded queue: a subscriber that stops reading
// loses lines, never slows a robot (the 2025-08-20 server's stall is impossible). Replies
// are never dropped; a client whose unread replies pass max_write_queue_bytes is cut off.
// Remote (non-loopback) clients must send `auth <token>` first when monitor_token is set.
// Every line a client makes the server log passes the per-connection and server-wide log
// budgets (connection_log.h), like a robot's.
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "app/server/protocol/monitor_envelope.h"
#include "app/server/config/server_config.h"
#include "app/server/session/monitor_work_budget.h"
#include "app/server/stats/connection_log.h"
#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_worker.h"

namespace fieldbrain::server {

class MonitorSession;

struct MonitorContext {
  const ServerConfig& config;
  BrainWorker& worker;
  ServerStats& stats;
  std::function<size_t()> monitor_clients;
  std::function<void(MonitorSession*)> on_closed;
  // The last `save` any monitor client ran (I/O thread only): saves are server-wide.
  std::chrono::steady_clock::time_point last_save{};
  bool saved_once = false;
  // All monitor clients' share of the brain thread (I/O thread only).
  MonitorWorkBudget work_budget{0.2};
};

class MonitorSession : public std::enable_shared_from_this<MonitorSession> {
 public:
  MonitorSession(boost::asio::ip::tcp::socket socket, MonitorContext& ctx);
  void start();
  void close(const std::string& why);
  // A published telemetry line; queued when this client is subscribed and the cycle is due,
  // or when it is a 2025-08-20 push client.
  void push(const TelemetryPush& line);
  uint64_t dropped() const { return dropped_; }
  const std::string& peer_address() const { return peer_address_; }

 private:
  void read_line();
  void on_line(const std::string& line);
  void on_command(const MonitorCommand& cmd);
  // The commands answered here (own_commands(), monitor_session.cpp); each returns true when
  // it replied, false when the command goes on to the worker.
  static const std::map<std::string, bool (MonitorSession::*)(const MonitorCommand&)>&
  own_commands();
  bool ping(const MonitorCommand& cmd);
  bool connection_stats(const MonitorCommand& cmd);
  bool pattern_stats(const MonitorCommand& cmd);
  bool subscribe(const MonitorCommand& cmd);
  bool limit_save(const MonitorCommand& cmd);
  // The brain-state commands (monitor_commands.h), answered on the worker thread.
  void answer_on_worker(const MonitorCommand& cmd);
  bool count_bad(const std::string& why);  // true when the client was cut off
  void start_legacy_push_timer();
  void stop_legacy_push();
  void reply(std::string line);  // never dropped
  void queue_push(const std::string& line);
  void drop_queued_pushes();
  void do_write();

  boost::asio::ip::tcp::socket socket_;
  boost::asio::any_io_executor executor_;
  boost::asio::steady_timer legacy_timer_;
  boost::asio::steady_timer pace_timer_;  // a brain command waiting for the monitors' budget
  MonitorContext& ctx_;
  std::string peer_address_;
  std::string who_;  // "monitor client <address>", for the log
  ConnectionLog log_;
  bool loopback_ = false;
  bool authenticated_ = false;  // monitor_token given (or not needed)
  bool heard_from_ = false;     // the client sent a byte: not a 2025-08-20 push client
  bool legacy_push_ = false;
  boost::asio::streambuf buf_;
  std::deque<std::string> out_;
  size_t out_bytes_ = 0;
  size_t queued_pushes_ = 0;
  std::deque<bool> is_push_;
  bool writing_ = false;
  bool closed_ = false;
  int consecutive_bad_ = 0;
  int64_t subscribe_every_ = 0;  // 0 = not subscribed
  uint64_t dropped_ = 0;
};

}  // namespace fieldbrain::server
