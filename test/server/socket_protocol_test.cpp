// Real sockets on 127.0.0.1 against an in-process server (toy brain): each framing's
// handshake and lock-step exchange, reply bytes checked field by field, the §9 byte traces
// of the legacy protocol (docs/protocol.md) replayed, partial and pipelined delivery.
#include "test/support/catch.h"
#include <chrono>
#include <cmath>
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

namespace {

// What the server must send back in every ACTION_OUTPUT: the framing's header fields, type 1,
// exactly M finite values in [-1, 1].
void check_action(const std::optional<Frame>& f, Framing framing, int motors) {
  REQUIRE(f.has_value());
  if (framing == Framing::B) CHECK(f->magic == kMagicRobo);
  if (framing == Framing::C) CHECK(f->magic == kMagicDeadBeef);
  CHECK(f->type == 1);
  CHECK(f->count == static_cast<uint32_t>(motors));
  CHECK(f->length == 5 + 4 * f->count);
  REQUIRE(f->values.size() == static_cast<size_t>(motors));
  for (float v : f->values) {
    CHECK(std::isfinite(v));
    CHECK(v >= -1.0f);
    CHECK(v <= 1.0f);
  }
}

std::vector<float> sensors_for(int cycle, int s) {
  std::vector<float> v(s);
  for (int i = 0; i < s; ++i) v[i] = 0.5f + 0.4f * std::sin(0.1f * cycle + i);
  return v;
}

}  // namespace

TEST_CASE("each binary framing drives a handshake and 200 lock-step cycles", "[server]") {
  ToyServer srv;
  const Framing framing = GENERATE(Framing::A, Framing::B, Framing::C);
  INFO(framing_name(framing));
  RobotClient robot(srv.port());
  auto reply = robot.handshake(framing, {1, 12, 6, 1, 3, 640, 480});
  REQUIRE(reply.has_value());
  CHECK(reply->type == 2);
  CHECK(reply->count == 5);
  CHECK(reply->length == 25);
  if (framing == Framing::A) {
    CHECK(reply->values == std::vector<float>{1, 6, 12, 6, 1});
  } else {
    CHECK(reply->values == std::vector<float>{1, 12, 6, 0, 8});
  }
  // An independent toy brain fed the same inputs predicts every motor value: the server
  // must pass the brain's motors through unchanged and in order.
  ToyEngine mirror;
  auto slot = mirror.create("x", 12, 6);
  for (int cycle = 0; cycle < 200; ++cycle) {
    const auto s = sensors_for(cycle, 12);
    auto f = robot.exchange(framing, s);
    check_action(f, framing, 6);
    const auto expected = mirror.step_group({slot}, s, {0.0f});
    for (int j = 0; j < 6; ++j) REQUIRE(f->values[j] == Approx(expected[j]).margin(1e-6));
  }
  CHECK(srv.server->stats().total_errors() == 0);
}

TEST_CASE("a JSON-lines robot drives a handshake and 200 cycles with rewards", "[server]") {
  ToyServer srv;
  RobotClient robot(srv.port());
  robot.send_text(R"({"type":"handshake","robot_id":"json-rover","sensory_dim":5,"motor_dim":2})"
                  "\n");
  auto line = robot.read_line();
  REQUIRE(line.has_value());
  auto hs = nlohmann::json::parse(*line);
  CHECK(hs["type"] == "handshake");
  CHECK(hs["accepted"] == true);
  CHECK(hs["robot_id"] == "json-rover");
  CHECK(hs["sensory_dim"] == 5);
  CHECK(hs["motor_dim"] == 2);
  CHECK(hs["cycle"] == 0);
  for (int cycle = 1; cycle <= 200; ++cycle) {
    nlohmann::json req = {{"type", "sensors"}, {"values", sensors_for(cycle, 5)}, {"reward", 0.5}};
    robot.send_text(req.dump() + "\n");
    auto r = robot.read_line();
    REQUIRE(r.has_value());
    auto j = nlohmann::json::parse(*r);
    REQUIRE(j["type"] == "motors");
    CHECK(j["cycle"] == cycle);
    REQUIRE(j["values"].size() == 2);
    for (float v : j["values"].get<std::vector<float>>()) CHECK(std::abs(v) <= 1.0f);
  }
}

TEST_CASE("the HEAD PiCar-X byte trace (9.1) gets well-formed framing B replies", "[server]") {
  ToyServer srv;
  RobotClient robot(srv.port());
  robot.send_bytes(
      from_hex("52 4F 42 4F 00 00 00 21 02 00 00 00 07 00 00 80 3F 00 00 40 41 "
               "00 00 C0 40 00 00 80 3F 00 00 40 40 00 00 20 44 00 00 F0 43"));
  auto hs = robot.read_frame(Framing::B);
  REQUIRE(hs.has_value());
  // HEAD's reply was ...0000000000007041 (caps 15); ours differs only in the caps float.
  CHECK(hex(hs->bytes).substr(0, 58) ==
        "524f424f0000001902000000050000803f000040410000c04000000000");
  CHECK(hs->bytes.size() == 33);
  robot.send_bytes(
      from_hex("52 4F 42 4F 00 00 00 35 00 00 00 00 0C 00 00 00 3F 00 00 00 3F "
               "00 00 00 3F 00 00 80 3E 00 00 40 3F 00 00 00 00 00 00 00 00 "
               "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 00 00 00 00"));
  auto a1 = robot.read_frame(Framing::B);
  check_action(a1, Framing::B, 6);
  CHECK(a1->bytes.size() == 37);
  CHECK(hex({a1->bytes.begin(), a1->bytes.begin() + 13}) == "524f424f0000001d0100000006");
  robot.send_bytes(
      from_hex("52 4F 42 4F 00 00 00 35 00 00 00 00 0C CD CC CC 3D 66 66 66 3F "
               "00 00 00 3F 00 00 80 3F 00 00 40 3F 00 00 00 3E 00 00 00 00 "
               "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 3F 00 00 00 00"));
  check_action(robot.read_frame(Framing::B), Framing::B, 6);
}

TEST_CASE("the ef2bdb8 MinimalBrainClient byte trace (9.2) gets framing A replies", "[server]") {
  ToyServer srv;
  RobotClient robot(srv.port());
  robot.send_bytes(
      from_hex("00 00 00 19 02 00 00 00 05 00 00 80 3F 00 00 C0 41 00 00 80 40 "
               "00 00 80 3F 00 00 80 3F"));
  auto hs = robot.read_frame(Framing::A);
  REQUIRE(hs.has_value());
  // ef2bdb8's reply for a robot after the first: [1, 4, 24, 4, 1].
  CHECK(hex(hs->bytes) ==
        "00000019020000000500"
        "00803f00008040"
        "0000c0410000804000"
        "00803f");
  std::vector<uint8_t> s1 = from_hex("00 00 00 65 00 00 00 00 18");
  for (int i = 0; i < 24; ++i) {
    for (uint8_t b : from_hex("00 00 00 3F")) s1.push_back(b);
  }
  robot.send_bytes(s1);
  auto a1 = robot.read_frame(Framing::A);
  check_action(a1, Framing::A, 4);
  CHECK(hex({a1->bytes.begin(), a1->bytes.begin() + 9}) == "000000150100000004");
}

TEST_CASE("split, byte-at-a-time and pipelined frames are each answered in order", "[server]") {
  ToyServer srv;
  RobotClient robot(srv.port());
  REQUIRE(robot.handshake(Framing::B, {1, 4, 2, 2, 0}).has_value());
  SECTION("one byte at a time") {
    auto bytes = encode_frame(Framing::B, MessageType::SensoryInput, {0.1f, 0.2f, 0.3f, 0.4f});
    for (uint8_t b : bytes) {
      robot.send_bytes({b});
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    check_action(robot.read_frame(Framing::B), Framing::B, 2);
  }
  SECTION("three frames in one write, then an unknown type") {
    std::vector<uint8_t> all;
    ToyEngine mirror;
    auto slot = mirror.create("x", 4, 2);
    std::vector<std::vector<float>> expected;
    for (int i = 0; i < 3; ++i) {
      std::vector<float> s = {0.1f * i, 0.5f, -0.5f, 1.0f};
      auto f = encode_frame(Framing::B, MessageType::SensoryInput, s);
      all.insert(all.end(), f.begin(), f.end());
      expected.push_back(mirror.step_group({slot}, s, {0.0f}));
    }
    auto unknown = encode_frame_raw(Framing::B, 7, {1.0f, 2.0f});
    all.insert(all.end(), unknown.begin(), unknown.end());
    robot.send_bytes(all);
    for (int i = 0; i < 3; ++i) {
      auto f = robot.read_frame(Framing::B);
      check_action(f, Framing::B, 2);
      CHECK(f->values[0] == Approx(expected[i][0]).margin(1e-6));
    }
    auto err = robot.read_frame(Framing::B);
    REQUIRE(err.has_value());
    CHECK(err->type == 255);
    CHECK(err->values == std::vector<float>{1.0f});
  }
}

TEST_CASE("duplicate and odd handshakes follow the legacy rules", "[server]") {
  ToyServer srv;
  SECTION("a second handshake gets the first reply again") {
    RobotClient robot(srv.port());
    auto first = robot.handshake(Framing::A, {1, 16, 4, 1});
    auto second = robot.handshake(Framing::A, {1, 30, 9, 1});
    REQUIRE(first.has_value());
    REQUIRE(second.has_value());
    CHECK(first->bytes == second->bytes);
    check_action(robot.exchange(Framing::A, std::vector<float>(16, 0.5f)), Framing::A, 4);
  }
  SECTION("non-integral sizes truncate; an empty vector takes the defaults") {
    RobotClient a(srv.port());
    auto r = a.handshake(Framing::B, {1, 12.7f, 6.2f});
    REQUIRE(r.has_value());
    CHECK(r->values[1] == 12.0f);
    CHECK(r->values[2] == 6.0f);
    RobotClient b(srv.port());
    auto d = b.handshake(Framing::B, {});
    REQUIRE(d.has_value());
    CHECK(d->values[1] == 16.0f);
    CHECK(d->values[2] == 4.0f);
  }
  SECTION("simultaneous twins get distinct identities") {
    RobotClient a(srv.port()), b(srv.port());
    REQUIRE(a.handshake(Framing::B, {1, 12, 6, 1, 3}).has_value());
    REQUIRE(b.handshake(Framing::B, {1, 12, 6, 1, 3}).has_value());
    CHECK(robot_keys(*srv.server) == std::vector<std::string>{"picarx_12s_6m", "picarx_12s_6m#2"});
  }
}
