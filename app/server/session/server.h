// The fieldbrain server: the robot port, the monitor port, one Asio I/O thread for all
// sockets and one brain worker thread (brain_worker.h) for all brains.
//
// stop() is the SIGINT/SIGTERM path of docs/protocol.md: stop accepting, answer the frames already
// in the brain, close every connection, save every robot, return.
#pragma once

#include <boost/asio.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/server/worker/brain_engine.h"
#include "app/server/worker/brain_worker.h"
#include "app/server/stats/log_budget.h"
#include "app/server/session/monitor_session.h"
#include "app/server/session/robot_session.h"
#include "app/server/config/server_config.h"
#include "app/server/stats/server_stats.h"

namespace fieldbrain::server {

class Server {
 public:
  // `engine` must outlive the server.
  // `fleet`: fleet mode (docs/fleet.md), null when the server runs alone; it must outlive the
  // server's stop().
  Server(ServerConfig config, BrainEngine& engine, FleetMembership* fleet = nullptr);
  ~Server();

  // Binds both ports (throws std::runtime_error naming the port when that fails), starts the
  // brain worker and the I/O thread.
  void start();
  void stop();  // idempotent

  uint16_t port() const { return port_; }
  uint16_t monitor_port() const { return monitor_port_; }
  const ServerConfig& config() const { return config_; }
  ServerStats& stats() { return stats_; }
  BrainWorker& worker() { return worker_; }
  // Another consumer of the telemetry lines (the web monitor); call before start(). It runs
  // on the brain worker thread, so it must only hand the line off.
  void add_telemetry_listener(BrainWorker::Publish listener) {
    telemetry_listeners_.push_back(std::move(listener));
  }

 private:
  void accept_robot();
  void accept_monitor();
  // Accept failed (EMFILE, ENFILE, ENOBUFS...): log once per interval and try again after a
  // pause instead of spinning on the error.
  void accept_failed(const boost::system::error_code& ec, boost::asio::steady_timer& timer,
                     void (Server::*again)());
  // Connection caps: true (and logged, once per interval) when `address` must be refused.
  bool over_cap(const char* port, size_t total, size_t max_total,
                const std::map<std::string, int>& per_address, const std::string& address);
  void report_suppressed_logs();
  void begin_shutdown();
  void on_session_closed();

  ServerConfig config_;
  BrainEngine& engine_;
  ServerStats stats_;
  BrainWorker worker_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::ip::tcp::acceptor monitor_acceptor_;
  boost::asio::steady_timer shutdown_deadline_;
  boost::asio::steady_timer robot_accept_pause_, monitor_accept_pause_;
  boost::asio::steady_timer log_report_timer_;  // the log budget's "suppressed" lines
  IntervalLog accept_error_log_{std::chrono::seconds(10)};
  IntervalLog refused_log_{std::chrono::seconds(10)};
  std::chrono::milliseconds accept_backoff_{0};
  SessionContext session_ctx_;
  MonitorContext monitor_ctx_;
  std::set<std::shared_ptr<RobotSession>> sessions_;    // I/O thread only
  std::set<std::shared_ptr<MonitorSession>> monitors_;  // I/O thread only
  std::map<std::string, int> robots_per_address_;       // I/O thread only
  std::map<std::string, int> monitors_per_address_;     // I/O thread only
  std::vector<BrainWorker::Publish> telemetry_listeners_;
  std::thread io_thread_;
  uint16_t port_ = 0, monitor_port_ = 0;
  bool started_ = false, stopped_ = false;
  bool shutting_down_ = false;  // I/O thread only
};

}  // namespace fieldbrain::server
