// The monitor port: welcome line, the legacy commands with their envelope, our own commands,
// and subscriptions that can never stall a robot.
#include <sys/socket.h>

#include "test/support/catch.h"
#include <chrono>
#include <filesystem>
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "app/server/worker/state_files.h"
#include "test/server/healthy_robot.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

namespace {

nlohmann::json ask(RobotClient& m, const std::string& command) {
  m.send_text(command + "\n");
  auto line = m.read_line();
  REQUIRE(line.has_value());
  return nlohmann::json::parse(*line);
}

}  // namespace

TEST_CASE("the monitor answers the legacy commands with the legacy envelope", "[server]") {
  auto dir = std::filesystem::temp_directory_path() / "fieldbrain-monitor-test";
  {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  ServerConfig c = test_config();
  c.state_dir = dir.string();
  ToyServer srv(c);
  RobotClient robot(srv.port());
  REQUIRE(robot.handshake(Framing::B, {1, 12, 6, 1, 3}).has_value());
  for (int i = 0; i < 5; ++i) REQUIRE(robot.exchange(Framing::B, std::vector<float>(12, 0.5f)));

  RobotClient m(srv.monitor_port());
  auto welcome = nlohmann::json::parse(m.read_line().value());
  CHECK(welcome["status"] == "connected");
  CHECK(welcome["commands"].size() >= 10);

  for (const char* cmd :
       {"brain_stats", "session_info", "connection_stats", "active_brains", "performance_metrics",
        "telemetry", "prediction_metrics", "pattern_stats"}) {
    INFO(cmd);
    auto r = ask(m, cmd);
    CHECK(r["status"] == "success");
    CHECK(r["request"] == cmd);
    CHECK(r["timestamp"].is_number());
    CHECK(r.contains("data"));
  }
  auto stats = ask(m, "brain_stats");
  CHECK(stats["data"]["total_sessions"] == 1);
  CHECK(stats["data"]["sessions"]["picarx_12s_6m"]["cycles_processed"] == 5);
  auto conn = ask(m, "connection_stats");
  CHECK(conn["data"]["total_messages"] == 5);
  CHECK(conn["data"]["error_stats"]["total_errors"] == 0);
  auto brains = ask(m, "ACTIVE_BRAINS");  // case-insensitive, as ef2bdb8
  CHECK(brains["data"][0]["sensory_dim"] == 12);
  auto perf = ask(m, "performance_metrics");
  CHECK(perf["data"]["robot_cycles"] == 5);
  auto pong = ask(m, "ping");
  CHECK(pong["status"] == "success");
  CHECK(pong["message"] == "pong");
  auto one = ask(m, "telemetry picarx_12s_6m");
  CHECK(one["status"] == "success");
  CHECK(one["data"]["cycle"] == 5);
  auto missing = ask(m, "telemetry nobody");
  CHECK(missing["status"] == "error");
  CHECK(missing["message"] == "Session nobody not found or has no telemetry");
  auto unknown = ask(m, "brain_state");
  CHECK(unknown["status"] == "error");
  CHECK(unknown["error"] == "Unknown command: brain_state");
  CHECK(unknown["available_commands"].is_array());

  auto slice = ask(m, "field_slice picarx_12s_6m 3 1");
  CHECK(slice["status"] == "success");
  CHECK(slice["data"]["values"].size() == 4);
  auto bad_slice = ask(m, "field_slice picarx_12s_6m 99 1");
  CHECK(bad_slice["status"] == "error");
  auto saved = ask(m, "save");
  CHECK(saved["data"]["saved"] == nlohmann::json::array({"picarx_12s_6m"}));
  // The state writer thread writes it: wait (bounded).
  const auto saved_file = dir / state_file_name("bin:picarx_12s_6m", ".toy");
  for (int i = 0; i < 500 && !std::filesystem::exists(saved_file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(std::filesystem::exists(saved_file));

  // Several commands in one packet are several commands (ef2bdb8 merged them into one).
  m.send_text("ping\nping\n");
  CHECK(nlohmann::json::parse(m.read_line().value())["message"] == "pong");
  CHECK(nlohmann::json::parse(m.read_line().value())["message"] == "pong");
  {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

TEST_CASE("subscribers get one telemetry line per N cycles", "[server]") {
  ToyServer srv;
  RobotClient m(srv.monitor_port());
  REQUIRE(m.read_line().has_value());
  auto sub = ask(m, "subscribe 2");
  CHECK(sub["status"] == "success");
  RobotClient robot(srv.port());
  REQUIRE(robot.handshake(Framing::B, {1, 12, 6, 1, 3}).has_value());
  for (int i = 0; i < 6; ++i) REQUIRE(robot.exchange(Framing::B, std::vector<float>(12, 0.25f)));
  for (int expected : {2, 4, 6}) {
    auto line = m.read_line();
    REQUIRE(line.has_value());
    auto j = nlohmann::json::parse(*line);
    CHECK(j["cycles"] == expected);
    CHECK(j["robot_id"] == "picarx_12s_6m");
    CHECK(j["sensors"].size() == 12);
    CHECK(j["motors"].size() == 6);
  }
}

TEST_CASE("a subscriber that never reads cannot slow a robot", "[server]") {
  ServerConfig c = test_config();
  c.subscriber_queue = 4;
  ToyServer srv(c);
  // A tiny receive buffer and no reads: the server's sends back up almost at once.
  RobotClient m(srv.monitor_port(), 10.0, /*rcvbuf=*/1024);
  m.send_text("subscribe 1\n");
  HealthyRobot healthy(srv.port());
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(healthy.wait_for_cycles(3000, 60.0));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  healthy.stop();
  CHECK(healthy.failure() == "");
  INFO("3000 cycles took " << seconds << " s with a stalled subscriber; "
       << srv.server->stats().subscriber_drops() << " lines dropped");
  CHECK(srv.server->stats().subscriber_drops() > 0);  // the bound really was hit
  CHECK(seconds < 60.0);
  // The monitor port still serves other clients.
  RobotClient other(srv.monitor_port());
  REQUIRE(other.read_line().has_value());
  CHECK(ask(other, "ping")["message"] == "pong");
}
