// The JSON-lines messages of docs/protocol.md, parsed and produced as pure functions.
#include "app/server/protocol/json_lines.h"

#include "test/support/catch.h"
#include <cmath>

#include "app/server/protocol/monitor_envelope.h"

using namespace fieldbrain::server;

TEST_CASE("JSON handshake and sensors lines parse; unknown fields are ignored", "[server]") {
  auto m = parse_json_line(
      R"({"type":"handshake","robot_id":"rover-1","sensory_dim":8,"motor_dim":3,"x":1})", 1024, 16,
      4);
  auto* hs = std::get_if<JsonHandshake>(&m);
  REQUIRE(hs);
  CHECK(hs->robot_id == "rover-1");
  CHECK(hs->sensory_dim == 8);
  CHECK(hs->motor_dim == 3);

  auto d = parse_json_line(R"({"type":"handshake"})", 1024, 12, 6);
  REQUIRE(std::get_if<JsonHandshake>(&d));
  CHECK(std::get<JsonHandshake>(d).sensory_dim == 12);

  auto s = parse_json_line(R"({"type":"sensors","values":[0.5,-1,2],"reward":0.25})", 1024, 16, 4);
  auto* sv = std::get_if<JsonSensors>(&s);
  REQUIRE(sv);
  CHECK(sv->values == std::vector<float>{0.5f, -1.0f, 2.0f});
  CHECK(sv->reward == 0.25f);
  CHECK(sv->values_ok);
  auto huge = parse_json_line(R"({"type":"sensors","values":[1e300]})", 1024, 16, 4);
  REQUIRE(std::get_if<JsonSensors>(&huge));
  CHECK(std::isinf(std::get<JsonSensors>(huge).values[0]));
}

TEST_CASE("malformed JSON lines become errors with legacy codes", "[server]") {
  auto code = [](const std::string& line) {
    auto m = parse_json_line(line, 1024, 16, 4);
    auto* bad = std::get_if<JsonBad>(&m);
    return bad ? bad->code : 0;
  };
  CHECK(code("{not json") == 7001);
  CHECK(code("[1,2,3]") == 7001);
  CHECK(code(R"({"values":[1]})") == 7001);
  CHECK(code(R"({"type":"dance"})") == 7001);
  CHECK(code(R"({"type":"sensors","values":"abc"})") == 7001);
  CHECK(code(R"({"type":"sensors","values":[1],"reward":"x"})") == 7001);
  CHECK(code(R"({"type":"handshake","sensory_dim":0,"motor_dim":4})") == 2001);
  CHECK(code(R"({"type":"handshake","sensory_dim":5000,"motor_dim":4})") == 2001);
  CHECK(code(R"({"type":"handshake","sensory_dim":4.5,"motor_dim":4})") == 2001);
  CHECK(code(R"({"type":"handshake","sensory_dim":4,"motor_dim":4,"robot_id":7})") == 2001);
  auto nonnum = parse_json_line(R"({"type":"sensors","values":[1,"a"]})", 1024, 16, 4);
  REQUIRE(std::get_if<JsonSensors>(&nonnum));
  CHECK_FALSE(std::get<JsonSensors>(nonnum).values_ok);
}

TEST_CASE("JSON replies are single lines that parse back", "[server]") {
  auto hs = nlohmann::json::parse(json_handshake_reply("r1", 8, 3, 42));
  CHECK(hs["type"] == "handshake");
  CHECK(hs["accepted"] == true);
  CHECK(hs["cycle"] == 42);
  const std::string motors = json_motors_reply({0.5f, -0.25f}, 7);
  CHECK(motors.back() == '\n');
  CHECK(std::count(motors.begin(), motors.end(), '\n') == 1);
  auto mj = nlohmann::json::parse(motors);
  CHECK(mj["values"][1].get<float>() == -0.25f);
  auto err = nlohmann::json::parse(json_error_reply(7001, "bad \xff byte"));
  CHECK(err["code"] == 7001);
}

TEST_CASE("monitor commands parse case-insensitively, one per line", "[server]") {
  auto c = parse_monitor_command("  TELEMETRY picarx_12s_6m \r");
  CHECK(c.name == "telemetry");
  CHECK(c.args == std::vector<std::string>{"picarx_12s_6m"});
  CHECK(c.text == "TELEMETRY picarx_12s_6m");
  auto w = nlohmann::json::parse(monitor_welcome_line());
  CHECK(w["status"] == "connected");
  CHECK(monitor_welcome_line().size() < 1024);  // TelemetryClient reads it with recv(1024)
  auto u = nlohmann::json::parse(monitor_unknown("dance"));
  CHECK(u["status"] == "error");
  CHECK(u["error"] == "Unknown command: dance");
  auto s = nlohmann::json::parse(monitor_success("ping", {{"a", 1}}));
  CHECK(s["status"] == "success");
  CHECK(s.contains("timestamp"));
}
