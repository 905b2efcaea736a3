// /metrics and /healthz on the web port (issue 25 item 7), scraped like Prometheus would:
// the text format parses, every family the docs list is there, and the counters move once a
// robot cycles.
#include "app/server/web/metrics_page.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include "test/support/catch.h"
#include <map>
#include <regex>
#include <sstream>

#include "app/server/web/web_monitor.h"
#include "app/version/version.h"
#include "test/server/healthy_robot.h"
#include "test/server/toy_engine.h"
#include "test/server/web_server.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

// The Prometheus text format (0.0.4): "# HELP"/"# TYPE" lines, then samples
// `name{labels} value`. Returns {"name{labels}": value}; FAILs on a line that is neither.
std::map<std::string, double> parse_metrics(const std::string& text,
                                            std::map<std::string, std::string>& types) {
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?) (\S+)$)");
  static const std::regex type(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$)");
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, type)) {
      types[m[1]] = m[2];
    } else if (line.rfind("# HELP ", 0) == 0) {
      continue;
    } else if (std::regex_match(line, m, sample)) {
      out[m[1]] = m[3] == "+Inf" ? INFINITY : std::stod(m[3]);
    } else {
      FAIL("not the Prometheus text format: '" << line << "'");
    }
  }
  return out;
}

}  // namespace

TEST_CASE("/metrics is Prometheus text whose counters move once a robot cycles",
          "[server][web][metrics]") {
  WebServer srv;
  auto first = http_request(srv.web->port(), http::verb::get, "/metrics");
  REQUIRE(first.result() == http::status::ok);
  CHECK(std::string(first[http::field::content_type]).rfind("text/plain; version=0.0.4", 0) == 0);
  std::map<std::string, std::string> types;
  auto before = parse_metrics(first.body(), types);
  for (const char* family :
       {"fieldbrain_robots", "fieldbrain_robot_cycles_total", "fieldbrain_reply_latency_seconds",
        "fieldbrain_bad_frames_total", "fieldbrain_saves_total", "fieldbrain_queue_drops_total",
        "fieldbrain_robot_cycles_per_second", "fieldbrain_build_info"}) {
    INFO(family);
    CHECK(types.count(family) == 1);
  }
  CHECK(types["fieldbrain_reply_latency_seconds"] == "histogram");
  CHECK(types["fieldbrain_robot_cycles_total"] == "counter");
  CHECK(before["fieldbrain_robots"] == 0);
  CHECK(before["fieldbrain_robot_cycles_total"] == 0);
  CHECK(before.count("fieldbrain_build_info{version=\"" + std::string(fieldbrain::version()) +
                     "\"}") == 1);

  {
    HealthyRobot robot(srv.server->port(), "scraped");
    REQUIRE(robot.wait_for_cycles(50));
    types.clear();
    auto during =
        parse_metrics(http_request(srv.web->port(), http::verb::get, "/metrics").body(), types);
    CHECK(during["fieldbrain_robots"] == 1);
    CHECK(during["fieldbrain_robot_cycles_total"] >= 50);
    CHECK(during["fieldbrain_reply_latency_seconds_count"] >= 50);
    CHECK(during["fieldbrain_reply_latency_seconds_bucket{le=\"+Inf\"}"] ==
          during["fieldbrain_reply_latency_seconds_count"]);
    // Buckets are cumulative.
    CHECK(during["fieldbrain_reply_latency_seconds_bucket{le=\"0.001\"}"] <=
          during["fieldbrain_reply_latency_seconds_bucket{le=\"1\"}"]);
    int per_robot = 0;
    for (const auto& [name, value] : during) {
      if (name.rfind("fieldbrain_robot_cycles_per_second{robot=", 0) != 0) continue;
      ++per_robot;
      CHECK(value > 0);
    }
    CHECK(per_robot == 1);
    robot.stop();
    CHECK(robot.failure().empty());
  }
}

TEST_CASE("/healthz answers ok once the brain worker answers", "[server][web][metrics]") {
  WebServer srv;
  auto res = http_request(srv.web->port(), http::verb::get, "/healthz");
  CHECK(res.result() == http::status::ok);
  CHECK(res.body() == "ok\n");
  CHECK(web::is_operator_page("/metrics?token=abc"));
  CHECK_FALSE(web::is_operator_page("/metricsx"));
}
