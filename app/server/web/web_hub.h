// The web monitor's state on its own I/O thread: the connected browsers, what each selected,
// and the pushes. Two sources feed it, neither of which a browser can slow down:
//   - telemetry lines from the brain worker's publisher (every kTelemetryEvery cycles while a
//     browser is connected), handed over through a bounded post (WebLink);
//   - a 4 Hz snapshot (robots, totals) and a 2 Hz field slice per distinct selection, read by
//     one brain-worker query at a time (a slow worker delays the page, never the reverse).
// A browser that joins gets a snapshot queried for it (never one kept from an earlier browser:
// with no browser open nothing is queried, so a kept one would be stale), and one that selects
// a robot gets the recent plot points and that robot's field at once.
#pragma once

#include <boost/asio.hpp>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "app/server/worker/brain_worker.h"
#include "app/server/config/server_config.h"
#include "app/server/stats/server_stats.h"
#include "app/server/web/web_messages.h"
#include "app/server/web/web_socket_session.h"

namespace fieldbrain::server::web {

// Telemetry for the plots: one line every this many cycles per robot while a browser is open.
constexpr int64_t kTelemetryEvery = 2;
constexpr int kSnapshotPeriodMs = 250;
constexpr int kFieldEverySnapshots = 2;  // heat map refresh: 2 Hz
// Plot points kept per robot while a browser is open, sent to a browser when it selects the
// robot (as many as the page's plots show), so a second browser starts with full plots.
constexpr size_t kHistoryPoints = 300;
// Telemetry lines handed to the web thread but not yet handled; beyond this they are dropped.
constexpr int kMaxTelemetryInFlight = 1024;

// How threads outside the web I/O thread (the brain worker) reach it: a post that is a no-op
// once the web side has stopped, so a late worker callback never touches a dead io_context.
class WebLink {
 public:
  explicit WebLink(boost::asio::io_context& io) : io_(&io) {}
  template <typename F>
  bool post(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!io_) return false;
    boost::asio::post(*io_, std::forward<F>(f));
    return true;
  }
  void cut() {
    std::lock_guard<std::mutex> lock(mutex_);
    io_ = nullptr;
  }

 private:
  std::mutex mutex_;
  boost::asio::io_context* io_;
};

class WebHub {
 public:
  WebHub(boost::asio::io_context& io, std::shared_ptr<WebLink> link, const ServerConfig& config,
         BrainWorker& worker, ServerStats& stats);

  void start();  // starts the snapshot timer
  void stop();   // closes every browser

  // Worker thread: hands a telemetry line over (or drops it when too many are in flight).
  void offer_telemetry(std::string line);

  // Web I/O thread, from the sessions.
  // Logs the join through the server-wide budget ("web browser connected"): a page that
  // reconnects in a loop must not write the log as fast as it can.
  void join(const std::shared_ptr<WebSocketSession>& session);
  void leave(WebSocketSession* session);
  void selection_changed(WebSocketSession& session);
  // A message a browser's full queue lost; also counted with the monitor port's dropped lines.
  void count_drop() {
    dropped_.fetch_add(1);
    stats_.subscriber_drop();
  }
  bool full() const { return sessions_.size() >= static_cast<size_t>(config_.max_monitor_clients); }

  uint64_t dropped() const { return dropped_.load(); }

  // For the operator pages (metrics_page.h), which query the worker like the snapshot does.
  BrainWorker& worker() { return worker_; }
  ServerStats& stats() { return stats_; }
  const ServerConfig& config() const { return config_; }
  const std::shared_ptr<WebLink>& link() const { return link_; }

 private:
  struct Snapshot {
    std::vector<RobotView> robots;
    int64_t resolution = 0;
    WebTotals totals;
    std::vector<std::pair<Selection, nlohmann::json>> fields;  // slice or {"error":..}
  };

  void arm_timer();
  void on_tick();
  // Queries robots and totals, and the fields of `wanted`, from the worker (one at a time).
  void request_snapshot(std::set<Selection> wanted);
  void on_snapshot(Snapshot snap);
  void on_telemetry(const std::string& line);
  void broadcast(const std::string& text);

  boost::asio::io_context& io_;
  std::shared_ptr<WebLink> link_;
  const ServerConfig& config_;
  BrainWorker& worker_;
  ServerStats& stats_;
  boost::asio::steady_timer timer_;
  std::set<std::shared_ptr<WebSocketSession>> sessions_;
  std::map<std::string, std::deque<std::string>> history_;  // robot key -> recent plot points
  CycleRates rates_;
  int64_t resolution_ = 0;
  uint64_t ticks_ = 0;
  bool query_in_flight_ = false;
  bool subscribed_ = false;
  bool stopped_ = false;
  std::atomic<bool> any_browser_{false};  // lets the worker skip the hand-off when none
  std::atomic<int> telemetry_in_flight_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace fieldbrain::server::web
