// Bad input, each case on its own connection while a healthy robot keeps cycling on another:
// the reply docs/protocol.md names, the error counted, the healthy robot unaffected, the server up.
#include "test/support/catch.h"
#include <cmath>
#include <limits>

#include "app/server/protocol/robot_client.h"
#include "test/server/healthy_robot.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

namespace {

std::vector<uint8_t> raw_a_header(uint32_t length, uint8_t type, uint32_t count) {
  std::vector<uint8_t> h;
  for (uint32_t v : {length}) {
    for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<uint8_t>(v >> s));
  }
  h.push_back(type);
  for (int s = 24; s >= 0; s -= 8) h.push_back(static_cast<uint8_t>(count >> s));
  return h;
}

bool all_zero(const Frame& f) {
  for (float v : f.values) {
    if (v != 0.0f) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("bad input gets the documented reply and never disturbs a healthy robot", "[server]") {
  ToyServer srv;
  HealthyRobot healthy(srv.port());
  REQUIRE(healthy.wait_for_cycles(20));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ServerStats& stats = srv.server->stats();

  SECTION("oversized frame: ERROR 3.1, then close, body never read") {
    RobotClient c(srv.port());
    c.send_bytes(raw_a_header(5 + 4 * 5000, 0, 5000));
    auto f = c.read_frame(Framing::A);
    REQUIRE(f.has_value());
    CHECK(f->type == 255);
    CHECK(f->values == std::vector<float>{3.1f});
    CHECK(c.wait_closed());
    CHECK(stats.errors_with_code(kCodeMessageTooLarge) >= 1);
  }
  SECTION("length/count mismatch: ERROR 2.0, then close") {
    RobotClient c(srv.port());
    c.send_bytes(raw_a_header(25, 2, 4));
    auto f = c.read_frame(Framing::A);
    REQUIRE(f.has_value());
    CHECK(f->type == 255);
    CHECK(f->values == std::vector<float>{2.0f});
    CHECK(c.wait_closed());
  }
  SECTION("truncated frame, then the client closes") {
    {
      RobotClient c(srv.port());
      REQUIRE(c.handshake(Framing::B, {1, 4, 2, 1, 0}).has_value());
      auto frame = encode_frame(Framing::B, MessageType::SensoryInput, {1, 2, 3, 4});
      frame.resize(frame.size() - 5);
      c.send_bytes(frame);
    }
    // The server notices, releases the robot, and keeps serving.
    for (int i = 0; i < 200 && robot_keys(*srv.server).size() > 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(robot_keys(*srv.server) == std::vector<std::string>{"healthy"});
  }
  SECTION("wrong sensor count and NaN/Inf: M zeros; a run of them closes") {
    RobotClient c(srv.port());
    REQUIRE(c.handshake(Framing::B, {1, 4, 3, 1, 0}).has_value());
    auto short_reply = c.exchange(Framing::B, {0.5f, 0.5f});
    REQUIRE(short_reply.has_value());
    CHECK(short_reply->type == 1);
    CHECK(short_reply->count == 3);
    CHECK(all_zero(*short_reply));
    auto nan_reply = c.exchange(Framing::B, {0.5f, nan, 0.5f, 0.5f});
    REQUIRE(nan_reply.has_value());
    CHECK(nan_reply->count == 3);
    CHECK(all_zero(*nan_reply));
    auto inf_reward = c.exchange(Framing::B, {0.5f, 0.5f, 0.5f, 0.5f, inf});
    REQUIRE(inf_reward.has_value());
    CHECK(all_zero(*inf_reward));
    // A good frame in between resets the run; the reward element is accepted.
    auto good = c.exchange(Framing::B, {0.5f, 0.5f, 0.5f, 0.5f, 1.0f});
    REQUIRE(good.has_value());
    CHECK_FALSE(all_zero(*good));
    for (int i = 0; i < 5; ++i) {
      auto z = c.exchange(Framing::B, {1.0f});
      REQUIRE(z.has_value());
      CHECK(all_zero(*z));
    }
    CHECK(c.wait_closed());  // max_bad_frames = 5 in test_config()
  }
  SECTION("unknown type: ERROR 1.0 and the connection stays") {
    RobotClient c(srv.port());
    REQUIRE(c.handshake(Framing::A, {1, 4, 2, 2, 0}).has_value());
    c.send_bytes(encode_frame_raw(Framing::A, 1, {0.25f, 0.5f}));
    auto e = c.read_frame(Framing::A);
    REQUIRE(e.has_value());
    CHECK(e->type == 255);
    CHECK(e->values == std::vector<float>{1.0f});
    auto ok = c.exchange(Framing::A, {0.1f, 0.2f, 0.3f, 0.4f});
    REQUIRE(ok.has_value());
    CHECK(ok->type == 1);
  }
  SECTION("garbage first bytes (read as a huge framing-A length) are refused and closed") {
    RobotClient c(srv.port());
    c.send_text("hello robot port\r\n\r\n");
    auto f = c.read_frame(Framing::A);
    REQUIRE(f.has_value());
    CHECK(f->type == 255);
    CHECK(c.wait_closed());
  }
  SECTION("handshake with NaN or absurd sizes: [-1, 2001, 1, 0, 0]") {
    RobotClient a(srv.port());
    auto r = a.handshake(Framing::A, {1, nan, 4, 1, 0});
    REQUIRE(r.has_value());
    CHECK(r->type == 2);
    CHECK(r->values == std::vector<float>{-1, 2001, 1, 0, 0});
    // framing A keeps the connection; sensory frames then get an empty ACTION (3001).
    auto empty = a.exchange(Framing::A, {0.5f});
    REQUIRE(empty.has_value());
    CHECK(empty->type == 1);
    CHECK(empty->count == 0);
    RobotClient b(srv.port());
    auto rb = b.handshake(Framing::B, {1, 1e9f, 6, 1, 3});
    REQUIRE(rb.has_value());
    CHECK(rb->values == std::vector<float>{-1, 2001, 1, 0, 0});
    CHECK(b.wait_closed());  // framing B closes after a refused handshake
    CHECK(stats.errors_with_code(kCodeInvalidCapabilities) >= 2);
  }
  SECTION("sensory frame before the handshake: an empty ACTION, code 3001") {
    RobotClient c(srv.port());
    auto f = c.exchange(Framing::C, {0.5f, 0.5f});
    REQUIRE(f.has_value());
    CHECK(f->magic == kMagicDeadBeef);
    CHECK(f->type == 1);
    CHECK(f->count == 0);
    CHECK(stats.errors_with_code(kCodeSessionNotFound) >= 1);
  }
  SECTION("malformed JSON: an error object and the connection stays") {
    RobotClient c(srv.port());
    c.send_text("{this is not json\n");
    auto e = c.read_line();
    REQUIRE(e.has_value());
    auto j = nlohmann::json::parse(*e);
    CHECK(j["type"] == "error");
    CHECK(j["code"] == 7001);
    c.send_text(R"({"type":"sensors","values":[1]})"
                "\n");
    auto before = nlohmann::json::parse(c.read_line().value());
    CHECK(before["code"] == 3001);
    c.send_text(R"({"type":"handshake","robot_id":"late","sensory_dim":2,"motor_dim":1})"
                "\n");
    auto hs = nlohmann::json::parse(c.read_line().value());
    CHECK(hs["accepted"] == true);
    c.send_text(R"({"type":"sensors","values":[1, 2, 3]})"
                "\n");
    auto wrong = nlohmann::json::parse(c.read_line().value());
    CHECK(wrong["type"] == "error");
    c.send_text(R"({"type":"sensors","values":[1, 2]})"
                "\n");
    auto motors = nlohmann::json::parse(c.read_line().value());
    CHECK(motors["type"] == "motors");
    CHECK(motors["cycle"] == 1);
  }
  SECTION("the brain throwing gives zeros for that frame and the robot goes on") {
    srv.engine.fail_on_sensor = 42;
    RobotClient c(srv.port());
    REQUIRE(c.handshake(Framing::B, {1, 2, 2, 1, 0}).has_value());
    auto z = c.exchange(Framing::B, {42.0f, 0.0f});
    REQUIRE(z.has_value());
    CHECK(z->count == 2);
    CHECK(all_zero(*z));
    auto ok = c.exchange(Framing::B, {0.5f, 0.0f});
    REQUIRE(ok.has_value());
    CHECK_FALSE(all_zero(*ok));
    srv.engine.fail_on_sensor = -999;
    CHECK(stats.errors_with_code(kCodeBrainProcessing) >= 1);
  }

  const int before = healthy.cycles();
  REQUIRE(healthy.wait_for_cycles(before + 20));
  healthy.stop();
  CHECK(healthy.failure() == "");
  // The server still accepts and serves a fresh robot.
  RobotClient fresh(srv.port());
  REQUIRE(fresh.handshake(Framing::A, {1, 3, 2, 2, 0}).has_value());
  auto f = fresh.exchange(Framing::A, {0.1f, 0.2f, 0.3f});
  REQUIRE(f.has_value());
  CHECK(f->count == 2);
}

TEST_CASE("a connection that never handshakes is closed by the handshake timeout", "[server]") {
  ServerConfig c = test_config();
  c.handshake_timeout_s = 0.3;
  c.idle_timeout_s = 0.5;
  ToyServer srv(c);
  RobotClient silent(srv.port());
  CHECK(silent.wait_closed(3.0));
  RobotClient idle(srv.port());
  REQUIRE(idle.handshake(Framing::B, {1, 2, 2, 1, 0}).has_value());
  CHECK(idle.wait_closed(3.0));  // idle after the handshake
  CHECK(srv.server->stats().errors_with_code(kCodeHandshakeTimeout) == 1);
  CHECK(srv.server->stats().errors_with_code(kCodeConnectionTimeout) == 1);
}
