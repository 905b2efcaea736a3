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
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>

#include "app/server/web/web_monitor.h"
#include "app/server/protocol/robot_client.h"
#include "app/version/version.h"
#include "test/server/captured_log.h"
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
        "fieldbrain_robot_cycles_per_second", "fieldbrain_build_info",
        "fieldbrain_robot_over_budget", "fieldbrain_rewards_dropped_total",
        "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds"}) {
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

TEST_CASE("/metrics has the standard process_* families, measured from this process",
          "[server][web][metrics]") {
  WebServer srv;
  // The server runs in this test's process: its figures can be checked against the test's own.
  const auto cpu_seconds = [] {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  const auto open_fds = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return static_cast<double>(n);
  };
  const double cpu_before = cpu_seconds(), fds_before = open_fds();
  std::map<std::string, std::string> types;
  auto m = parse_metrics(http_request(srv.web->port(), http::verb::get, "/metrics").body(), types);
  const double cpu_after = cpu_seconds();
  CHECK(types["process_cpu_seconds_total"] == "counter");
  CHECK(types["process_resident_memory_bytes"] == "gauge");
  CHECK(types["process_open_fds"] == "gauge");
  // Clock ticks are 10 ms: the page may round down by one.
  CHECK(m["process_cpu_seconds_total"] >= cpu_before - 0.02);
  CHECK(m["process_cpu_seconds_total"] <= cpu_after + 0.02);
  CHECK(m["process_resident_memory_bytes"] > 1 << 20);
  // The scrape's own connection and the directory listings come and go.
  CHECK(m["process_open_fds"] == Approx(fds_before).margin(8));
  CHECK(m["process_max_fds"] >= m["process_open_fds"]);
  CHECK(m["process_start_time_seconds"] > 1.5e9);
}

TEST_CASE("/metrics says per robot whether its replies are over its loop budget",
          "[server][web][metrics]") {
  WebServer srv([](ServerConfig& c) { c.robots.json_loop_budget_ms = 20; });  // JSON robots
  const auto over_budget = [&](const std::string& robot) {
    std::map<std::string, std::string> types;
    auto m =
        parse_metrics(http_request(srv.web->port(), http::verb::get, "/metrics").body(), types);
    const std::string name = "fieldbrain_robot_over_budget{robot=\"" + robot + "\"}";
    return m.count(name) ? m[name] : -1.0;
  };
  HealthyRobot fast(srv.server->port(), "fast");
  REQUIRE(fast.wait_for_cycles(20));
  CHECK(over_budget("fast") == 0);
  fast.stop();
  srv.engine.delay_ms = 40;  // every reply now takes twice the budget
  HealthyRobot slow(srv.server->port(), "slow");
  REQUIRE(slow.wait_for_cycles(15));  // past the watch's ten-reply warm-up
  CHECK(over_budget("slow") == 1);
  slow.stop();
  CHECK(slow.failure().empty());
}

namespace {

// A toy brain that ignores rewards, as the legacy profile with legacy_reward "drop" does, and
// says so the way that engine describes itself.
class RewardDroppingEngine : public ToyEngine {
 public:
  nlohmann::json describe() const override {
    nlohmann::json d = ToyEngine::describe();
    d["profile"] = "legacy";
    d["legacy_reward"] = "drop";
    return d;
  }
};

}  // namespace

TEST_CASE("Rewards sent to a brain that drops them are counted on /metrics and logged once",
          "[server][web][metrics]") {
  CapturedLog log;
  RewardDroppingEngine engine;
  ServerConfig c = test_config();
  c.web_port = 0;
  Server server(c, engine);
  web::WebMonitor web_monitor(server);
  server.start();
  web_monitor.start();
  {
    RobotClient robot(server.port(), 10.0);
    REQUIRE(robot.handshake(Framing::B, {1, 4, 2, 1, 3}));
    // S + 1 values: the last is the reward. Three of five are not 0.
    for (float reward : {0.5f, 0.0f, -1.0f, 0.0f, 0.25f}) {
      REQUIRE(robot.exchange(Framing::B, {0.1f, 0.2f, 0.3f, 0.4f, reward}));
    }
  }
  std::map<std::string, std::string> types;
  auto m = parse_metrics(http_request(web_monitor.port(), http::verb::get, "/metrics").body(),
                         types);
  CHECK(types["fieldbrain_rewards_dropped_total"] == "counter");
  CHECK(m["fieldbrain_rewards_dropped_total"] == 3);
  INFO(log.text());
  CHECK(log.count("sends rewards, but brain.legacy_reward is \"drop\"") == 1);
  CHECK(log.count("--legacy-reward append") == 1);
  server.stop();
  web_monitor.stop();
}

TEST_CASE("A brain that uses rewards counts none as dropped", "[server][web][metrics]") {
  WebServer srv;
  {
    RobotClient robot(srv.server->port(), 10.0);
    REQUIRE(robot.handshake(Framing::B, {1, 4, 2, 1, 3}));
    for (float reward : {0.5f, -1.0f}) {
      REQUIRE(robot.exchange(Framing::B, {0.1f, 0.2f, 0.3f, 0.4f, reward}));
    }
  }
  std::map<std::string, std::string> types;
  auto m = parse_metrics(http_request(srv.web->port(), http::verb::get, "/metrics").body(), types);
  CHECK(m["fieldbrain_robot_cycles_total"] == 2);
  CHECK(m["fieldbrain_rewards_dropped_total"] == 0);
}

TEST_CASE("The alert rules in deploy/ name only metrics the server exports",
          "[server][web][metrics]") {
  WebServer srv;
  std::map<std::string, std::string> types;
  {
    HealthyRobot robot(srv.server->port(), "scraped");  // the per-robot families have a sample
    REQUIRE(robot.wait_for_cycles(5));
    parse_metrics(http_request(srv.web->port(), http::verb::get, "/metrics").body(), types);
  }
  std::ifstream in(std::string(FIELDBRAIN_SOURCE_DIR) + "/deploy/prometheus-alerts.yml");
  REQUIRE(in);
  const std::string rules((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const std::regex name(R"(\b((fieldbrain|process)_[a-z_]+)\b)");
  int named = 0;
  for (std::sregex_iterator it(rules.begin(), rules.end(), name), end; it != end; ++it) {
    std::string family = (*it)[1];
    // A histogram's series are its family's name and a suffix.
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      const std::string s = suffix;
      if (family.size() > s.size() && family.compare(family.size() - s.size(), s.size(), s) == 0 &&
          types.count(family.substr(0, family.size() - s.size()))) {
        family = family.substr(0, family.size() - s.size());
      }
    }
    INFO(family);
    CHECK(types.count(family) == 1);
    ++named;
  }
  CHECK(named >= 5);
  CHECK(rules.find("job=\"fieldbrain\"") != std::string::npos);  // the scrape job's name
}

TEST_CASE("/healthz answers ok once the brain worker answers", "[server][web][metrics]") {
  WebServer srv;
  auto res = http_request(srv.web->port(), http::verb::get, "/healthz");
  CHECK(res.result() == http::status::ok);
  CHECK(res.body() == "ok\n");
  CHECK(web::is_operator_page("/metrics?token=abc"));
  CHECK_FALSE(web::is_operator_page("/metricsx"));
}
