// One client of the monitor port: the welcome line, one command per line answered in order
// (brain facts are read on the brain worker, replies come back to the I/O thread), and the
// `subscribe <n>` push mode. Pushed lines sit in a bounded queue: a subscriber that stops
// reading loses lines, never slows a robot (docs/protocol.md, legacy §4.2's stall is impossible).
#pragma once

#include <boost/asio.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "app/server/brain_worker.h"
#include "app/server/monitor_envelope.h"
#include "app/server/server_config.h"
#include "app/server/server_stats.h"

namespace fieldbrain::server {

class MonitorSession;

struct MonitorContext {
  const ServerConfig& config;
  BrainWorker& worker;
  ServerStats& stats;
  std::function<size_t()> monitor_clients;
  std::function<void(MonitorSession*)> on_closed;
};

class MonitorSession : public std::enable_shared_from_this<MonitorSession> {
 public:
  MonitorSession(boost::asio::ip::tcp::socket socket, MonitorContext& ctx);
  void start();
  void close(const std::string& why);
  // A telemetry line for `cycle`; queued when subscribed and the cycle is due.
  void push(int64_t cycle, const std::string& line);
  uint64_t dropped() const { return dropped_; }

 private:
  void read_line();
  void on_command(const MonitorCommand& cmd);
  void answer_on_worker(const MonitorCommand& cmd);
  void reply(std::string line);  // never dropped
  void do_write();

  boost::asio::ip::tcp::socket socket_;
  boost::asio::any_io_executor executor_;
  MonitorContext& ctx_;
  boost::asio::streambuf buf_;
  std::deque<std::string> out_;
  size_t queued_pushes_ = 0;
  std::deque<bool> is_push_;
  bool writing_ = false;
  bool closed_ = false;
  int64_t subscribe_every_ = 0;  // 0 = not subscribed
  uint64_t dropped_ = 0;
};

}  // namespace fieldbrain::server
