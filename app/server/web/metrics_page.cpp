#include "app/server/web/metrics_page.h"

#include <fmt/format.h>

#include <vector>

#include "app/server/worker/fleet_membership.h"
#include "app/server/worker/brain_worker.h"
#include "app/server/protocol/handshake.h"
#include "app/server/stats/process_metrics.h"
#include "app/server/stats/server_stats.h"
#include "app/server/protocol/wall_clock.h"
#include "app/server/web/web_hub.h"
#include "app/version/version.h"

namespace fieldbrain::server::web {
namespace {

using json = nlohmann::json;

std::string_view path_of(std::string_view target) {
  const size_t q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

// A label value in the text format: backslash, double quote and newline escaped.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// What only the worker thread may read, copied there.
struct WorkerFacts {
  std::vector<RobotView> robots;
  size_t live_brains = 0;
};

// Appends one metric family with a single sample.
void family(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, value);
}

std::string metrics_text(const WorkerFacts& facts, BrainWorker& worker, ServerStats& stats) {
  std::string out;
  out += fmt::format(
      "# HELP fieldbrain_build_info The running server's version.\n"
      "# TYPE fieldbrain_build_info gauge\nfieldbrain_build_info{{version=\"{}\"}} 1\n",
      label(fieldbrain::version()));
  family(out, "fieldbrain_uptime_seconds", "gauge", "Seconds since the server started.",
         stats.uptime_s());
  family(out, "fieldbrain_robots", "gauge", "Robots connected with a ready brain.",
         static_cast<double>(facts.robots.size()));
  family(out, "fieldbrain_live_brains", "gauge", "Brains in memory, loading ones included.",
         static_cast<double>(facts.live_brains));
  family(out, "fieldbrain_robot_cycles_total", "counter", "Robot-cycles stepped by the brain.",
         static_cast<double>(worker.frames_stepped()));
  family(out, "fieldbrain_brain_calls_total", "counter",
         "Batched brain calls (robot-cycles / calls = robots per call).",
         static_cast<double>(worker.brain_calls()));

  out +=
      "# HELP fieldbrain_robot_cycles_per_second Cycles per second of each connected robot over "
      "its connection.\n# TYPE fieldbrain_robot_cycles_per_second gauge\n";
  const double now = epoch_seconds();
  for (const RobotView& r : facts.robots) {
    const double seconds = now - r.connected_at;
    out += fmt::format("fieldbrain_robot_cycles_per_second{{robot=\"{}\"}} {}\n", label(r.key),
                       seconds > 0 ? static_cast<double>(r.session_cycles) / seconds : 0.0);
  }

  out +=
      "# HELP fieldbrain_robot_over_budget 1 while a robot's smoothed reply latency is over its "
      "loop budget (robots.loop_budget_ms; the slow-robot warning), else 0.\n"
      "# TYPE fieldbrain_robot_over_budget gauge\n";
  for (const RobotView& r : facts.robots) {
    out += fmt::format("fieldbrain_robot_over_budget{{robot=\"{}\"}} {}\n", label(r.key),
                       r.over_budget ? 1 : 0);
  }

  const LatencyHistogram& latency = stats.reply_latency();
  out +=
      "# HELP fieldbrain_reply_latency_seconds A frame queued for the brain until its motors are "
      "ready.\n# TYPE fieldbrain_reply_latency_seconds histogram\n";
  for (size_t i = 0; i < LatencyHistogram::kBounds.size(); ++i) {
    out += fmt::format("fieldbrain_reply_latency_seconds_bucket{{le=\"{}\"}} {}\n",
                       LatencyHistogram::kBounds[i], latency.cumulative(i));
  }
  out +=
      fmt::format("fieldbrain_reply_latency_seconds_bucket{{le=\"+Inf\"}} {}\n", latency.count());
  out += fmt::format("fieldbrain_reply_latency_seconds_sum {}\n", latency.sum_seconds());
  out += fmt::format("fieldbrain_reply_latency_seconds_count {}\n", latency.count());

  // Frames the robot port refused: malformed, too large, or of the wrong size.
  const uint64_t bad = stats.errors_with_code(kCodeInvalidMessage) +
                       stats.errors_with_code(kCodeMessageTooLarge) +
                       stats.errors_with_code(kCodeDimensionMismatch);
  family(out, "fieldbrain_bad_frames_total", "counter",
         "Robot frames refused (invalid, too large, wrong size).", static_cast<double>(bad));
  out +=
      "# HELP fieldbrain_errors_total Errors logged, by protocol error code name.\n"
      "# TYPE fieldbrain_errors_total counter\n";
  const json by_code = stats.connection_stats_json()["error_stats"]["by_code"];
  for (auto it = by_code.begin(); it != by_code.end(); ++it) {
    out += fmt::format("fieldbrain_errors_total{{code=\"{}\"}} {}\n", label(it.key()),
                       it.value().get<uint64_t>());
  }
  family(out, "fieldbrain_saves_total", "counter", "Robot brains written to the state dir.",
         static_cast<double>(worker.saves()));
  family(out, "fieldbrain_save_failures_total", "counter", "Saves that failed.",
         static_cast<double>(stats.errors_with_code(kCodePersistenceSave)));
  family(out, "fieldbrain_queue_drops_total", "counter",
         "Telemetry lines monitor and web clients lost to their full queues.",
         static_cast<double>(stats.subscriber_drops()));
  family(out, "fieldbrain_rewards_dropped_total", "counter",
         "Non-zero rewards robots sent that the brain ignored (legacy profile, legacy_reward "
         "\"drop\").",
         static_cast<double>(stats.rewards_dropped()));
  append_process_metrics(out);
  return out;
}

}  // namespace

bool is_operator_page(std::string_view target) {
  const std::string_view path = path_of(target);
  return path == "/metrics" || path == "/healthz";
}

void render_operator_page(std::string_view target, WebHub& hub,
                          std::function<void(OperatorPage)> done) {
  const bool metrics = path_of(target) == "/metrics";
  auto link = hub.link();
  WebHub* hub_ptr = &hub;
  const bool queued = hub.worker().query([metrics, link, hub_ptr, done](BrainWorker& w) {
    OperatorPage page;
    if (metrics) {
      WorkerFacts facts;
      facts.robots = w.robots();
      facts.live_brains = w.live_brains();
      page.content_type = "text/plain; version=0.0.4; charset=utf-8";
      page.body = metrics_text(facts, w, hub_ptr->stats());
    } else if (w.fleet() && !w.fleet()->healthy()) {
      // A fleet member without a valid lease takes no robots: HAProxy's check sends new
      // robots to the other servers (deploy/haproxy.cfg).
      page.status = 503;
      page.content_type = "text/plain; charset=utf-8";
      page.body = "no fleet lease: etcd unreachable, taking no new robots\n";
    } else {
      page.content_type = "text/plain; charset=utf-8";
      page.body = "ok\n";
    }
    link->post([done, page = std::move(page)]() mutable { done(std::move(page)); });
  });
  if (!queued) done({503, "text/plain; charset=utf-8", "stopping\n"});
}

}  // namespace fieldbrain::server::web
