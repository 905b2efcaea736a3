#include "app/server/web/web_hub.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "app/server/protocol/wall_clock.h"

namespace fieldbrain::server::web {

namespace asio = boost::asio;
using nlohmann::json;

WebHub::WebHub(asio::io_context& io, std::shared_ptr<WebLink> link, const ServerConfig& config,
               BrainWorker& worker, ServerStats& stats)
    : io_(io), link_(std::move(link)), config_(config), worker_(worker), stats_(stats), timer_(io) {}

void WebHub::start() {
  asio::post(io_, [this] { arm_timer(); });
}

void WebHub::stop() {
  stopped_ = true;
  timer_.cancel();
  auto sessions = sessions_;  // close() calls leave(), which edits the set
  for (const auto& s : sessions) s->close("web monitor stopping");
  sessions_.clear();
  any_browser_.store(false);
  if (subscribed_) worker_.remove_period(kTelemetryEvery);
  subscribed_ = false;
}

void WebHub::offer_telemetry(std::string line) {
  // Lines also flow when only monitor-port subscribers want them; then there is nobody here.
  if (!any_browser_.load()) return;
  if (telemetry_in_flight_.load() >= kMaxTelemetryInFlight) {
    dropped_.fetch_add(1);
    return;
  }
  telemetry_in_flight_.fetch_add(1);
  const bool posted = link_->post([this, line = std::move(line)] {
    telemetry_in_flight_.fetch_sub(1);
    on_telemetry(line);
  });
  if (!posted) telemetry_in_flight_.fetch_sub(1);
}

void WebHub::join(const std::shared_ptr<WebSocketSession>& session) {
  if (stopped_) return session->close("web monitor stopping");
  sessions_.insert(session);
  any_browser_.store(true);
  if (!subscribed_) {
    worker_.add_period(kTelemetryEvery);
    subscribed_ = true;
  }
  const json hello = {{"type", "hello"},
                      {"telemetry_every", kTelemetryEvery},
                      {"snapshot_ms", kSnapshotPeriodMs},
                      {"field_ms", kSnapshotPeriodMs * kFieldEverySnapshots},
                      {"queue_limit", config_.subscriber_queue}};
  session->send(std::make_shared<const std::string>(hello.dump()));
  // A fresh snapshot now (one in flight was asked for within the last tick: it serves too).
  if (!query_in_flight_) request_snapshot({});
  if (stats_.may_log("web browser connected")) {
    spdlog::info("web monitor: browser connected ({} open)", sessions_.size());
  }
}

void WebHub::leave(WebSocketSession* session) {
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == session) {
      sessions_.erase(it);
      break;
    }
  }
  any_browser_.store(!sessions_.empty());
  if (sessions_.empty() && subscribed_) {
    // No browser: the worker stops computing telemetry for the page, and the history would
    // have a gap.
    worker_.remove_period(kTelemetryEvery);
    subscribed_ = false;
    history_.clear();
  }
}

void WebHub::selection_changed(WebSocketSession& session) {
  const Selection& sel = session.selection();
  spdlog::debug("web monitor: selected {} channel {} z {}", sel.robot, sel.channel, sel.z);
  if (sel.robot.empty()) return;
  // The plots start full: the points kept for this robot, oldest first.
  std::string text = R"({"type":"history","robot":)" + json(sel.robot).dump() + R"(,"points":[)";
  auto it = history_.find(sel.robot);
  if (it != history_.end()) {
    for (size_t i = 0; i < it->second.size(); ++i) text += (i ? "," : "") + it->second[i];
  }
  text += "]}";
  session.send(std::make_shared<const std::string>(std::move(text)));
  // And its field now rather than at the next 2 Hz refresh.
  if (!query_in_flight_) request_snapshot({sel});
}

void WebHub::arm_timer() {
  if (stopped_) return;
  timer_.expires_after(std::chrono::milliseconds(kSnapshotPeriodMs));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    on_tick();
    arm_timer();
  });
}

void WebHub::on_tick() {
  ++ticks_;
  // One query at a time: a busy worker slows the page's refresh, never the robots.
  if (sessions_.empty() || query_in_flight_) return;
  std::set<Selection> wanted;
  if (ticks_ % kFieldEverySnapshots == 0) {
    for (const auto& s : sessions_) {
      if (!s->selection().robot.empty()) wanted.insert(s->selection());
    }
  }
  request_snapshot(std::move(wanted));
}

void WebHub::request_snapshot(std::set<Selection> wanted) {
  WebTotals base;
  base.web_clients = sessions_.size();
  base.web_dropped = dropped_.load();
  auto link = link_;
  ServerStats& stats = stats_;
  const bool queued = worker_.query([this, link, wanted, base, &stats](BrainWorker& w) {
    Snapshot snap;
    snap.robots = w.robots();
    snap.resolution = w.engine().describe().value("resolution", int64_t{0});
    snap.totals = base;
    snap.totals.brain_calls = w.brain_calls();
    snap.totals.robot_cycles = w.frames_stepped();
    snap.totals.saves = w.saves();
    snap.totals.errors = stats.total_errors();
    snap.totals.uptime_s = stats.uptime_s();
    for (const Selection& sel : wanted) {
      const RobotView* r = w.robot_by_key(sel.robot);
      if (!r) continue;  // gone; the robots list tells the page
      const int64_t z = sel.z < 0 ? snap.resolution / 2 : sel.z;
      try {
        snap.fields.emplace_back(sel, w.engine().field_slice(w.slot_of(r->id), sel.channel, z));
      } catch (const std::exception& e) {
        snap.fields.emplace_back(sel, json{{"error", e.what()}});
      }
    }
    link->post([this, snap = std::move(snap)]() mutable { on_snapshot(std::move(snap)); });
  });
  query_in_flight_ = queued;
}

void WebHub::on_snapshot(Snapshot snap) {
  query_in_flight_ = false;
  if (stopped_) return;
  resolution_ = snap.resolution;
  const double now = epoch_seconds();
  const auto& rates = rates_.update(snap.robots, now);
  snap.totals.web_dropped = dropped_.load();
  broadcast(
      robots_message(snap.robots, rates, stats_.errors_by_source(), snap.totals, resolution_, now)
          .dump(-1, ' ', false, json::error_handler_t::replace));
  for (auto it = history_.begin(); it != history_.end();) {  // robots that left
    const bool listed = std::any_of(snap.robots.begin(), snap.robots.end(),
                                    [&](const RobotView& r) { return r.key == it->first; });
    it = listed ? std::next(it) : history_.erase(it);
  }
  for (const auto& [sel, slice] : snap.fields) {
    std::string text;
    if (slice.contains("error")) {
      text = json{{"type", "error"}, {"message", slice["error"]}}.dump();
    } else {
      text = field_message(sel.robot, slice).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    auto message = std::make_shared<const std::string>(std::move(text));
    for (const auto& s : sessions_) {
      const Selection& mine = s->selection();
      if (!(mine < sel) && !(sel < mine)) s->send(message);
    }
  }
}

void WebHub::on_telemetry(const std::string& line) {
  if (stopped_ || sessions_.empty()) return;
  const auto point = telemetry_point(line);
  if (!point) return;
  const std::string& robot = (*point)["robot"].get_ref<const std::string&>();
  auto message = std::make_shared<const std::string>(
      point->dump(-1, ' ', false, json::error_handler_t::replace));
  auto& kept = history_[robot];
  kept.push_back(*message);
  if (kept.size() > kHistoryPoints) kept.pop_front();
  for (const auto& s : sessions_) {
    if (s->selection().robot == robot) s->send(message);
  }
}

void WebHub::broadcast(const std::string& text) {
  auto message = std::make_shared<const std::string>(text);
  for (const auto& s : sessions_) s->send(message);
}

}  // namespace fieldbrain::server::web
