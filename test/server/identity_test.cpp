// Robot identity (issue 12 item 1, issue 15 item 5) with the toy brain: tokens protect JSON
// ids offline and online, binary keys are their own namespace, a size mismatch keeps the
// save, ids that look alike keep separate files, and binary robots can be keyed by address.
#include "test/support/catch.h"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "app/server/protocol/handshake.h"
#include "app/server/protocol/robot_client.h"
#include "app/server/worker/state_files.h"
#include "test/server/fresh_dir.h"
#include "test/server/json_robot.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

ServerConfig protected_config(const fs::path& dir) {
  ServerConfig c = test_config();
  c.state_dir = dir.string();
  c.robots.require_tokens = true;
  return c;
}

const std::vector<float> kSensors = {0.1f, 0.2f, 0.3f, 0.4f};

// Waits (bounded) until the server holds no brain, i.e. the last robot was released.
void wait_released(ToyServer& srv) {
  for (int i = 0; i < 300 && !robot_keys(*srv.server).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Waits (bounded) until n robots have a ready brain (a binary resume loads behind the
// handshake reply; frames before that get a safe stop and do not advance the brain).
void wait_ready(ToyServer& srv, size_t n) {
  for (int i = 0; i < 300 && robot_keys(*srv.server).size() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Runs n cycles as `id` with `token`; returns the handshake reply.
nlohmann::json run_owner(uint16_t port, const std::string& id, const std::string& token, int n) {
  RobotClient c(port);
  auto hs = json_handshake(c, id, 4, 3, token).value();
  for (int i = 0; i < n && hs["type"] == "handshake"; ++i) REQUIRE(json_step(c, kSensors));
  return hs;
}

int files_named(const fs::path& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("a JSON robot id is protected by its token while offline and while online", "[server]") {
  auto dir = fresh_dir("fieldbrain-identity-token");
  ToyServer srv(protected_config(dir));
  const auto first = run_owner(srv.port(), "rover", "", 5);
  REQUIRE(first["type"] == "handshake");
  REQUIRE(first.contains("token"));
  const std::string token = first["token"];
  CHECK(token.size() == 32);
  wait_released(srv);

  SECTION("offline: a claim without the token is refused and the save is untouched") {
    const auto save = dir / state_file_name("json:rover", ".toy");
    for (int i = 0; i < 300 && !fs::exists(save); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(fs::exists(save));
    const auto written = fs::last_write_time(save);
    RobotClient thief(srv.port());
    auto reply = json_handshake(thief, "rover", 4, 3).value();
    CHECK(reply["type"] == "error");
    CHECK(reply["code"] == kCodeIdentityRefused);
    CHECK(reply["message"].get<std::string>().find("token") != std::string::npos);
    auto wrong = json_handshake(thief, "rover", 4, 3, "not-the-token").value();
    CHECK(wrong["code"] == kCodeIdentityRefused);
    CHECK(robot_keys(*srv.server).empty());
    CHECK(fs::last_write_time(save) == written);
    // The owner still resumes where it left off.
    RobotClient owner(srv.port());
    auto back = json_handshake(owner, "rover", 4, 3, token).value();
    CHECK(back["type"] == "handshake");
    CHECK(back["cycle"] == 5);
    CHECK_FALSE(back.contains("token"));
  }
  SECTION("online: a claim without the token while the owner cycles is refused") {
    RobotClient owner(srv.port());
    REQUIRE(json_handshake(owner, "rover", 4, 3, token).value()["type"] == "handshake");
    REQUIRE(json_step(owner, kSensors));
    RobotClient thief(srv.port());
    auto reply = json_handshake(thief, "rover", 4, 3).value();
    CHECK(reply["code"] == kCodeIdentityRefused);
    CHECK(robot_keys(*srv.server) == std::vector<std::string>{"rover"});  // no "rover#2"
    auto step = json_step(owner, kSensors).value();
    CHECK(step["cycle"] == 7);
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("a JSON client cannot claim a binary robot's key", "[server]") {
  auto dir = fresh_dir("fieldbrain-identity-namespace");
  ToyServer srv(protected_config(dir));
  {
    RobotClient picarx(srv.port());
    REQUIRE(picarx.handshake(Framing::B, {1, 4, 3, 1, 0}).has_value());
    for (int i = 0; i < 9; ++i) REQUIRE(picarx.exchange(Framing::B, kSensors).has_value());
  }
  wait_released(srv);
  RobotClient impostor(srv.port());
  auto reply = json_handshake(impostor, "picarx_4s_3m", 4, 3).value();
  REQUIRE(reply["type"] == "handshake");
  CHECK(reply["cycle"] == 0);  // its own fresh brain, not the PiCar-X's 9 cycles
  for (int i = 0; i < 3; ++i) REQUIRE(json_step(impostor, {0.9f, 0.9f, 0.9f, 0.9f}));
  impostor.close();
  wait_released(srv);
  RobotClient picarx(srv.port());
  REQUIRE(picarx.handshake(Framing::B, {1, 4, 3, 1, 0}).has_value());
  wait_ready(srv, 1);
  CHECK(on_worker(*srv.server, [](BrainWorker& w) { return w.robots().at(0).cycle; }) == 9);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("a handshake with other sizes for a saved id is refused and the save is kept",
          "[server]") {
  auto dir = fresh_dir("fieldbrain-identity-dims");
  ServerConfig c = protected_config(dir);
  c.robots.require_tokens = false;  // the owner itself comes back with other sizes
  ToyServer srv(c);
  run_owner(srv.port(), "arm", "", 4);
  wait_released(srv);
  RobotClient other(srv.port());
  auto reply = json_handshake(other, "arm", 6, 3).value();
  CHECK(reply["type"] == "error");
  CHECK(reply["code"] == kCodeDimensionMismatch);
  CHECK(reply["message"].get<std::string>().find("kept") != std::string::npos);
  CHECK(files_named(dir, state_file_name("json:arm", ".toy") + ".corrupt") == 0);
  other.close();
  RobotClient owner(srv.port());
  // Seen once on Debian 13 under the full suite (the owner resumed at cycle 0), not reproduced
  // in 300 runs here: a failure now says what the reply and the state folder were.
  const auto back = json_handshake(owner, "arm", 4, 3).value();
  std::string files;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename().string() + " ";
  INFO("reply: " << back.dump() << "; state files: " << files);
  CHECK(back["cycle"] == 4);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("ids that differ only in unsafe characters keep separate saves", "[server]") {
  auto dir = fresh_dir("fieldbrain-identity-names");
  ServerConfig c = protected_config(dir);
  c.robots.require_tokens = false;
  CHECK(state_file_name("json:a/b", ".toy") != state_file_name("json:a_b", ".toy"));
  {
    ToyServer srv(c);
    run_owner(srv.port(), "a/b", "", 3);
    wait_released(srv);
    run_owner(srv.port(), "a_b", "", 7);
    wait_released(srv);
    RobotClient again(srv.port());
    CHECK(json_handshake(again, "a/b", 4, 3).value()["cycle"] == 3);
    RobotClient other(srv.port());
    CHECK(json_handshake(other, "a_b", 4, 3).value()["cycle"] == 7);
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("binary robots from different addresses get different brains when keyed by address",
          "[server]") {
  auto dir = fresh_dir("fieldbrain-identity-address");
  ServerConfig c = protected_config(dir);
  c.robots.binary_key = "address";
  c.robots.address_names = {{"127.0.0.3", "kitchen"}};
  ToyServer srv(c);
  {
    RobotClient a(srv.port(), 10.0, 0, "127.0.0.2");
    RobotClient b(srv.port(), 10.0, 0, "127.0.0.3");
    REQUIRE(a.handshake(Framing::B, {1, 4, 3, 1, 0}).has_value());
    REQUIRE(b.handshake(Framing::B, {1, 4, 3, 1, 0}).has_value());
    for (int i = 0; i < 4; ++i) REQUIRE(a.exchange(Framing::B, kSensors).has_value());
    for (int i = 0; i < 2; ++i) REQUIRE(b.exchange(Framing::B, kSensors).has_value());
    CHECK(robot_keys(*srv.server) ==
          std::vector<std::string>{"picarx_4s_3m@127.0.0.2", "picarx_4s_3m@kitchen"});
  }
  wait_released(srv);
  // Each resumes its own brain when it comes back.
  RobotClient b(srv.port(), 10.0, 0, "127.0.0.3");
  REQUIRE(b.handshake(Framing::B, {1, 4, 3, 1, 0}).has_value());
  wait_ready(srv, 1);
  REQUIRE(b.exchange(Framing::B, kSensors).has_value());
  CHECK(on_worker(*srv.server, [](BrainWorker& w) { return w.robots().at(0).cycle; }) == 3);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}
