// Issue 36 item 3: every log line a client of the monitor port or of the web monitor's
// WebSocket can cause passes the same two budgets as a robot's: its connection's
// (log_lines_per_minute) and the server-wide one of its kind (log_lines_per_kind). Before,
// 200 x (9 bad + 1 good) control messages on one WebSocket wrote 1,800 lines.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test/server/captured_log.h"
#include "test/server/eventually.h"
#include "test/server/web_server.h"
#include "test/support/catch.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace beast = boost::beast;
using tcp = boost::asio::ip::tcp;

namespace {

using WebSocket = beast::websocket::stream<tcp::socket>;

std::unique_ptr<WebSocket> open_browser(boost::asio::io_context& io, uint16_t port) {
  auto ws = std::make_unique<WebSocket>(io);
  ws->next_layer().connect({boost::asio::ip::make_address("127.0.0.1"), port});
  ws->handshake("127.0.0.1:" + std::to_string(port), "/ws");
  return ws;
}

// `rounds` x (9 bad control messages + 1 good one), never reading the replies (the server's
// bounded queue drops them): never 10 bad in a row, so the server never closes the socket.
void flood_control_messages(WebSocket& ws, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 9; ++i) ws.write(boost::asio::buffer(std::string("{not json")));
    ws.write(boost::asio::buffer(std::string(R"({"type":"select","robot":"r1"})")));
  }
}

// Waits until the count of lines holding `needle` has not changed for half a second (the
// server has read the flood), at most 20 s; returns it.
size_t settled_count(CapturedLog& log, const std::string& needle) {
  size_t last = log.count(needle);
  auto since = std::chrono::steady_clock::now();
  const auto end = since + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < end &&
         std::chrono::steady_clock::now() - since < std::chrono::milliseconds(500)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const size_t now = log.count(needle);
    if (now != last) {
      last = now;
      since = std::chrono::steady_clock::now();
    }
  }
  return last;
}

}  // namespace

TEST_CASE("a flood of bad WebSocket control messages writes a bounded number of log lines",
          "[server][web][limits]") {
  CapturedLog log;
  SECTION("one browser: its connection's budget (log_lines_per_minute)") {
    WebServer srv([](ServerConfig& c) {
      c.log_level = "info";
      c.log_lines_per_minute = 10;
      c.log_lines_per_kind = 100000;
    });
    boost::asio::io_context io;
    auto ws = open_browser(io, srv.web->port());
    flood_control_messages(*ws, 200);
    const size_t lines = settled_count(log, "bad control message:");
    INFO(log.text().substr(0, 4000));
    CHECK(lines >= 1);
    CHECK(lines <= 10);
    // Closing says how many were held back.
    ws->close(beast::websocket::close_code::normal);
    CHECK(eventually([&] { return log.count("further log lines were suppressed") == 1; }));
  }
  SECTION("several browsers: the server-wide budget of the kind (log_lines_per_kind)") {
    WebServer srv([](ServerConfig& c) {
      c.log_level = "info";
      c.log_lines_per_minute = 100000;
      c.log_lines_per_kind = 10;
    });
    boost::asio::io_context io;
    std::vector<std::unique_ptr<WebSocket>> browsers;
    for (int i = 0; i < 4; ++i) browsers.push_back(open_browser(io, srv.web->port()));
    for (auto& ws : browsers) flood_control_messages(*ws, 50);
    const size_t lines = settled_count(log, "bad control message:");
    INFO(log.text().substr(0, 4000));
    CHECK(lines >= 1);
    // The budget's 10, plus what it refills (10 a minute) while a busy machine runs the flood.
    CHECK(lines <= 15);
    CHECK(log.count("over the server-wide budget") >= 1);
  }
}

TEST_CASE("monitor clients that only listen cannot write the log as fast as they connect",
          "[server][limits]") {
  CapturedLog log;
  ServerConfig c = test_config();
  c.log_level = "info";
  c.legacy_push = true;
  c.legacy_push_after_s = 0.05;
  c.log_lines_per_kind = 5;
  ToyServer srv(c);
  spdlog::set_level(spdlog::level::info);
  boost::asio::io_context io;
  std::vector<std::unique_ptr<tcp::socket>> clients;
  for (int i = 0; i < 20; ++i) {
    clients.push_back(std::make_unique<tcp::socket>(io));
    clients.back()->connect({boost::asio::ip::make_address("127.0.0.1"), srv.monitor_port()});
  }
  REQUIRE(eventually([&] { return log.count("over the server-wide budget") >= 1; }));
  const size_t lines = settled_count(log, "silent, pushing telemetry");
  INFO(log.text());
  CHECK(lines >= 1);
  CHECK(lines <= 5);
}
