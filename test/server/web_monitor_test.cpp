// The web monitor (app/server/web/) against an in-process server with the toy brain: its
// HTTP side, the WebSocket pushes a browser gets, bad control messages, and the message
// builders. The real browser and the stalled-client rate test are in test/web/.
#include "app/server/web/web_monitor.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include "test/support/catch.h"
#include <chrono>
#include <set>

#include "app/server/web/web_assets.h"
#include "app/server/web/web_messages.h"
#include "test/server/healthy_robot.h"
#include "test/server/loopback_peer.h"
#include "test/server/toy_engine.h"
#include "test/server/web_server.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
using namespace fieldbrain::server::web;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;
using nlohmann::json;

namespace {

struct Browser {
  explicit Browser(uint16_t port) : ws(io) {
    ws.next_layer().connect({boost::asio::ip::make_address("127.0.0.1"), port});
    with_read_timeout(ws.next_layer());
    ws.handshake("127.0.0.1", "/ws");
  }
  json read() {
    beast::flat_buffer buf;
    ws.read(buf);
    return json::parse(beast::buffers_to_string(buf.data()));
  }
  // Reads until a message of `type` satisfying `ok` arrives (within 10 s: plot points of a
  // fast toy robot arrive by the thousand between two field refreshes).
  json read_until(const std::string& type, const std::function<bool(const json&)>& ok) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      json m = read();
      if (m.value("type", "") == type && ok(m)) return m;
    }
    FAIL("no '" << type << "' message as expected within 10 s");
    return {};
  }
  void send(const std::string& text) { ws.write(boost::asio::buffer(text)); }
  boost::asio::io_context io;
  beast::websocket::stream<tcp::socket> ws;
};

RobotView view(const std::string& key, int64_t cycle) {
  RobotView v;
  v.key = key;
  v.framing = "B";
  v.cycle = cycle;
  v.session_cycles = cycle;
  return v;
}

}  // namespace

TEST_CASE("the web monitor serves its page and uPlot from the binary, and nothing else",
          "[server][web]") {
  WebServer srv;
  REQUIRE(srv.web->enabled());
  auto page = http_request(srv.web->port(), http::verb::get, "/");
  CHECK(page.result() == http::status::ok);
  CHECK(std::string(page[http::field::content_type]).rfind("text/html", 0) == 0);
  CHECK(page.body().find("uPlot.iife.min.js") != std::string::npos);
  CHECK(page.body().find("monitor.js") != std::string::npos);

  auto uplot = http_request(srv.web->port(), http::verb::get, "/uPlot.iife.min.js?v=1");
  CHECK(uplot.result() == http::status::ok);
  CHECK(uplot.body().rfind("/*! https://github.com/leeoniya/uPlot", 0) == 0);

  CHECK(http_request(srv.web->port(), http::verb::get, "/../etc/passwd").result() ==
        http::status::not_found);
  CHECK(http_request(srv.web->port(), http::verb::get, "/nothing.js").result() ==
        http::status::not_found);
  CHECK(http_request(srv.web->port(), http::verb::post, "/").result() ==
        http::status::method_not_allowed);
}

TEST_CASE("with a monitor_token, another machine needs the token once and then its cookie",
          "[server][web]") {
  WebServer s("secret-token-123");
  const uint16_t port = s.web->port();
  // This machine needs no token.
  CHECK(http_request(port, http::verb::get, "/").result() == http::status::ok);
  // Another address: refused without the token, refused with a wrong one.
  CHECK(http_request(port, http::verb::get, "/", "127.0.0.2").result() ==
        http::status::unauthorized);
  CHECK(http_request(port, http::verb::get, "/?token=secret-token-12", "127.0.0.2").result() ==
        http::status::unauthorized);
  CHECK(http_request(port, http::verb::get, "/monitor.js", "127.0.0.2", "fieldbrain_token=wrong")
            .result() == http::status::unauthorized);
  // The right token in the query opens the page and sets the cookie the page's files need.
  auto page = http_request(port, http::verb::get, "/?token=secret-token-123", "127.0.0.2");
  REQUIRE(page.result() == http::status::ok);
  const std::string set_cookie(page[http::field::set_cookie]);
  CHECK(set_cookie.find("fieldbrain_token=secret-token-123") == 0);
  CHECK(set_cookie.find("HttpOnly") != std::string::npos);
  CHECK(http_request(port, http::verb::get, "/monitor.js", "127.0.0.2",
                     "other=1; fieldbrain_token=secret-token-123")
            .result() == http::status::ok);
}

TEST_CASE("a browser gets the robots, its robot's plot points and field slices over the WebSocket",
          "[server][web]") {
  WebServer srv;
  HealthyRobot robot(srv.server->port(), "healthy");
  REQUIRE(robot.wait_for_cycles(5));
  Browser browser(srv.web->port());
  CHECK(browser.read()["type"] == "hello");

  const json robots = browser.read_until("robots", [](const json& m) {
    return m["robots"].size() == 1 && m["robots"][0]["cycle"] > 0;
  });
  const json& row = robots["robots"][0];
  CHECK(row["key"] == "healthy");
  CHECK(row["framing"] == "json");
  CHECK(row["sensory_dim"] == 6);
  CHECK(row["motor_dim"] == 3);
  CHECK(row["bad_frames"] == 0);
  CHECK(row["latency_ms"].get<double>() >= 0.0);
  CHECK(robots["totals"]["brain_calls"].get<uint64_t>() >= 1);
  CHECK(robots["resolution"] == 4);

  browser.send(json{{"type", "select"}, {"robot", "healthy"}, {"channel", 3}, {"z", 1}}.dump());
  const json point = browser.read_until("telemetry", [](const json&) { return true; });
  CHECK(point["robot"] == "healthy");
  CHECK(point["motors"].size() == 3);
  CHECK(point["reward"].get<double>() == Approx(0.1));  // what HealthyRobot sends
  CHECK(point["confidence"].get<double>() == Approx(0.5));
  CHECK(point["cycle"].get<int64_t>() % kTelemetryEvery == 0);

  const json field = browser.read_until("field", [](const json&) { return true; });
  CHECK(field["robot"] == "healthy");
  CHECK(field["channel"] == 3);
  CHECK(field["z"] == 1);
  CHECK(field["values"].size() == 16);  // the toy brain's R = 4

  // A slice the brain refuses comes back as an error, and the page keeps working.
  browser.send(json{{"type", "select"}, {"robot", "healthy"}, {"channel", 3}, {"z", 9}}.dump());
  const json refused = browser.read_until("error", [](const json&) { return true; });
  CHECK(refused["message"].get<std::string>().find("out of range") != std::string::npos);
  robot.stop();
  CHECK(robot.failure() == "");
}

TEST_CASE("a browser that opens later gets the robots of now and the recent plot points at once",
          "[server][web]") {
  WebServer srv;
  HealthyRobot robot(srv.server->port(), "healthy");
  REQUIRE(robot.wait_for_cycles(5));
  {
    Browser first(srv.web->port());
    CHECK(first.read()["type"] == "hello");
    first.send(json{{"type", "select"}, {"robot", "healthy"}}.dump());
    for (int i = 0; i < 4; ++i) first.read_until("telemetry", [](const json&) { return true; });

    // While the first browser is open, a second one gets the points kept for its selection.
    Browser second(srv.web->port());
    CHECK(second.read()["type"] == "hello");
    second.send(json{{"type", "select"}, {"robot", "healthy"}}.dump());
    const json history = second.read_until("history", [](const json&) { return true; });
    CHECK(history["robot"] == "healthy");
    REQUIRE(history["points"].size() >= 4);
    for (size_t i = 1; i < history["points"].size(); ++i) {
      CHECK(history["points"][i]["cycle"] > history["points"][i - 1]["cycle"]);
    }
    CHECK(history["points"][0]["type"] == "telemetry");
  }
  // No browser for a while: nothing is queried. A new browser's first robots message is of
  // now, not the one of when the last browser left.
  const int before = robot.cycles();
  REQUIRE(robot.wait_for_cycles(before + 20));
  const int now = robot.cycles();
  Browser later(srv.web->port());
  CHECK(later.read()["type"] == "hello");
  const json robots = later.read_until("robots", [](const json&) { return true; });
  REQUIRE(robots["robots"].size() == 1);
  CHECK(robots["robots"][0]["cycle"].get<int64_t>() >= now);
  robot.stop();
  CHECK(robot.failure() == "");
}

TEST_CASE(
    "a bad control message gets an error back and a client that keeps sending them is "
    "closed",
    "[server][web]") {
  WebServer srv;
  Browser browser(srv.web->port());
  CHECK(browser.read()["type"] == "hello");
  browser.send("{not json");
  const json e = browser.read_until("error", [](const json&) { return true; });
  CHECK(e["message"].get<std::string>().find("JSON object") != std::string::npos);
  bool closed = false;
  for (int i = 0; i < 20 && !closed; ++i) {
    try {
      browser.send(R"({"type":"select","robot":7})");
    } catch (const std::exception&) {
      closed = true;
    }
  }
  if (!closed) {
    try {
      for (int i = 0; i < 50; ++i) browser.read();
    } catch (const std::exception&) {
      closed = true;
    }
  }
  CHECK(closed);
  // The monitor still serves others.
  Browser other(srv.web->port());
  CHECK(other.read()["type"] == "hello");
}

TEST_CASE("control messages are checked field by field", "[server][web]") {
  const Selection s = parse_selection(R"({"type":"select","robot":"r1","channel":62,"z":3})");
  CHECK(s.robot == "r1");
  CHECK(s.channel == 62);
  CHECK(s.z == 3);
  CHECK(parse_selection(R"({"type":"select","robot":"r1"})").z == -1);
  CHECK_THROWS_WITH(parse_selection("[1]"), Catch::Contains("JSON object"));
  CHECK_THROWS_WITH(parse_selection(R"({"type":"go"})"), Catch::Contains("unknown"));
  CHECK_THROWS_WITH(parse_selection(R"({"type":"select"})"), Catch::Contains("robot"));
  CHECK_THROWS_WITH(parse_selection(R"({"type":"select","robot":"r","channel":64})"),
                    Catch::Contains("0..63"));
  CHECK_THROWS_WITH(parse_selection(R"({"type":"select","robot":"r","z":"a"})"),
                    Catch::Contains("\"z\""));
}

TEST_CASE("the robots message derives cycles per second, idle robots and refused handshakes",
          "[server][web]") {
  CycleRates rates;
  rates.update({view("a", 100), view("b", 50)}, 10.0);
  const auto& r = rates.update({view("a", 150), view("b", 50)}, 10.5);
  CHECK(r.at("a").rate == Approx(100.0));  // 50 cycles in 0.5 s
  CHECK(r.at("b").rate == Approx(0.0));

  const json errors = {{"a", {{"count", 3}, {"code", 7001}, {"at", 10.4}}},
                       {"10.0.0.9:5000", {{"count", 1}, {"code", 2001}, {"at", 10.2}}},
                       {"10.0.0.8:5000", {{"count", 1}, {"code", 2001}, {"at", -100.0}}}};
  WebTotals totals;
  totals.brain_calls = 10;
  totals.robot_cycles = 25;
  // "b" last advanced at 10.0; 2 s later it is idle, while "a" advanced at 10.5.
  const json m = robots_message({view("a", 150), view("b", 50)}, r, errors, totals, 8, 11.2);
  REQUIRE(m["robots"].size() == 3);  // a, b and the recent refusal, not the old one
  CHECK(m["robots"][0]["state"] == "cycling");
  CHECK(m["robots"][0]["bad_frames"] == 3);
  CHECK(m["robots"][1]["state"] == "idle");
  CHECK(m["robots"][2]["key"] == "10.0.0.9:5000");
  CHECK(m["robots"][2]["state"] == "refused");
  CHECK(m["totals"]["robots_per_call"].get<double>() == Approx(2.5));
}

TEST_CASE("a telemetry line becomes a compact plot point; anything else is skipped",
          "[server][web]") {
  const auto p = telemetry_point(
      R"({"robot_id":"r","cycles":12,"motors":[0.5,-1],"reward":0.25,"prediction_confidence":0.7,"novelty":0.1,"other":1})");
  REQUIRE(p.has_value());
  CHECK((*p)["robot"] == "r");
  CHECK((*p)["cycle"] == 12);
  CHECK((*p)["motors"] == json::array({0.5, -1}));
  CHECK((*p)["reward"] == 0.25);
  CHECK((*p)["confidence"] == 0.7);
  CHECK((*p)["novelty"] == 0.1);
  CHECK_FALSE(p->contains("other"));
  CHECK_FALSE(telemetry_point("not json").has_value());
  CHECK_FALSE(telemetry_point(R"({"cycles":1})").has_value());
}

TEST_CASE("a bad web_port or web_host stops the server at start-up naming the key",
          "[server][web]") {
  ServerConfig c = test_config();
  c.web_port = 70000;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("web_port"));
  c.web_port = 0;
  c.web_host = "not-an-address";
  ToyEngine engine;
  Server server(c, engine);
  WebMonitor web(server);
  server.start();
  CHECK_THROWS_WITH(web.start(), Catch::Contains("web_host"));
  server.stop();

  // A port already taken (by another web monitor) is refused by name too.
  WebServer first;
  ServerConfig taken = test_config();
  taken.web_port = first.web->port();
  ToyEngine engine2;
  Server second(taken, engine2);
  WebMonitor web2(second);
  second.start();
  CHECK_THROWS_WITH(web2.start(), Catch::Contains("web_port"));
  second.stop();
  CHECK(nlohmann::json::parse(R"({"web_port": 8080, "web_host": "0.0.0.0"})")
            .get<ServerConfig>()
            .web_port == 8080);
}

// Issue 24 item 7: the token in the WebSocket's query string was accepted, then the target
// "/ws?token=..." did not match "/ws".
TEST_CASE("the WebSocket opens at /ws with the token in its query string", "[server][web]") {
  WebServer srv("secret-token-24");
  boost::asio::io_context io;
  beast::websocket::stream<tcp::socket> ws(io);
  ws.next_layer().open(tcp::v4());
  ws.next_layer().bind({boost::asio::ip::make_address("127.0.0.2"), 0});
  ws.next_layer().connect({boost::asio::ip::make_address("127.0.0.1"), srv.web->port()});
  with_read_timeout(ws.next_layer());
  beast::websocket::response_type res;
  beast::error_code ec;
  ws.handshake(res, "127.0.0.1", "/ws?token=secret-token-24", ec);
  INFO(res);
  CHECK_FALSE(ec);
  CHECK(res.result() == http::status::switching_protocols);
}

// Issue 24 item 2: idle HTTP connections are capped in total and per address, so they can
// never take the descriptors robots and saves need.
TEST_CASE("idle HTTP connections to the web port are capped per address and in total",
          "[server][web][limits]") {
  WebServer srv;
  const uint16_t port = srv.web->port();
  std::vector<std::unique_ptr<LoopbackPeer>> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(std::make_unique<LoopbackPeer>("127.0.0.1", port));
  LoopbackPeer over("127.0.0.1", port);  // the 9th from one address
  CHECK(over.closed_within(2.0));
  CHECK_FALSE(idle.front()->closed_within(0.2));
  // Another address still gets in, and a request on it is answered.
  CHECK(http_request(port, http::verb::get, "/", "127.0.0.2").result() == http::status::ok);
  // A connection that never sends its headers is closed at the header deadline (5 s).
  CHECK(idle.front()->closed_within(7.0));
}
