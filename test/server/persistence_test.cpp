// Identity and persistence with the toy brain: a robot that reconnects resumes exactly where
// it left off; a corrupt save is reported, moved aside, and the robot starts fresh.
#include "test/support/catch.h"
#include <filesystem>
#include <fstream>
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "app/server/worker/state_files.h"
#include "test/server/fresh_dir.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

std::vector<float> sensors_at(int cycle) {
  return {0.1f * (cycle % 7), 0.5f, -0.25f * (cycle % 3), 0.9f};
}

// Runs cycles [from, to) for a JSON robot; returns the motors of each.
std::vector<std::vector<float>> run_json(uint16_t port, const std::string& id, int from, int to,
                                         long long* cycle_at_handshake = nullptr) {
  RobotClient c(port);
  c.send_text("{\"type\":\"handshake\",\"robot_id\":\"" + id +
              "\",\"sensory_dim\":4,\"motor_dim\":3}\n");
  auto hs = nlohmann::json::parse(c.read_line().value());
  if (cycle_at_handshake) *cycle_at_handshake = hs["cycle"].get<long long>();
  std::vector<std::vector<float>> out;
  for (int cycle = from; cycle < to; ++cycle) {
    nlohmann::json req = {{"type", "sensors"}, {"values", sensors_at(cycle)}};
    c.send_text(req.dump() + "\n");
    auto j = nlohmann::json::parse(c.read_line().value());
    out.push_back(j["values"].get<std::vector<float>>());
  }
  return out;
}

}  // namespace

TEST_CASE("a robot that reconnects resumes its brain: same motors as an uninterrupted run",
          "[server]") {
  auto dir = fresh_dir("fieldbrain-resume-test");
  ServerConfig c = test_config();
  c.state_dir = dir.string();
  std::vector<std::vector<float>> uninterrupted, interrupted;
  {
    ToyServer srv(c);
    uninterrupted = run_json(srv.port(), "straight", 0, 60);
  }
  long long resumed_at = -1;
  {
    ToyServer srv(c);
    interrupted = run_json(srv.port(), "bumpy", 0, 25);
  }
  {
    ToyServer srv(c);  // a restarted server: state comes from the disconnect save
    auto rest = run_json(srv.port(), "bumpy", 25, 60, &resumed_at);
    interrupted.insert(interrupted.end(), rest.begin(), rest.end());
  }
  CHECK(resumed_at == 25);
  REQUIRE(interrupted.size() == uninterrupted.size());
  for (size_t i = 0; i < uninterrupted.size(); ++i) {
    INFO("cycle " << i);
    for (size_t k = 0; k < 3; ++k) CHECK(interrupted[i][k] == uninterrupted[i][k]);
  }
  {
    std::error_code ignored;  // a save may still be landing; leftovers are harmless
    fs::remove_all(dir, ignored);
  }
}

TEST_CASE("a corrupt save is moved aside and the robot starts fresh", "[server]") {
  auto dir = fresh_dir("fieldbrain-corrupt-test");
  fs::create_directories(dir);
  {
    std::ofstream(dir / state_file_name("json:wreck", ".toy"))
        << "{\"s\": 4, \"m\": 3, \"cyc";  // truncated
  }
  ServerConfig c = test_config();
  c.state_dir = dir.string();
  ToyServer srv(c);
  long long cycle = -1;
  auto motors = run_json(srv.port(), "wreck", 0, 3, &cycle);
  CHECK(cycle == 0);
  CHECK(motors.size() == 3);
  bool moved = false;
  for (const auto& e : fs::directory_iterator(dir)) {
    moved = moved || e.path().filename().string().rfind(
                         state_file_name("json:wreck", ".toy") + ".corrupt-", 0) == 0;
  }
  CHECK(moved);
  CHECK(srv.server->stats().errors_with_code(kCodePersistenceLoad) == 1);
  {
    std::error_code ignored;  // a save may still be landing; leftovers are harmless
    fs::remove_all(dir, ignored);
  }
}

TEST_CASE("periodic saves happen every N cycles", "[server]") {
  auto dir = fresh_dir("fieldbrain-periodic-test");
  ServerConfig c = test_config();
  c.state_dir = dir.string();
  c.save_every_cycles = 10;
  ToyServer srv(c);
  RobotClient robot(srv.port());
  REQUIRE(robot.handshake(Framing::B, {1, 4, 3, 2, 0}).has_value());
  for (int i = 0; i < 35; ++i) REQUIRE(robot.exchange(Framing::B, sensors_at(i)).has_value());
  // Saves are written by the state writer thread, which keeps only the newest of the
  // snapshots it has not begun: wait (bounded) for the one of cycle 30.
  const auto file = dir / state_file_name("bin:generic_4s_3m", ".toy");
  auto saved_cycle = [&] {
    auto j = nlohmann::json::parse(std::ifstream(file), nullptr, false);
    return j.is_object() ? j.value("cycle", -1) : -1;
  };
  for (int i = 0; i < 500 && saved_cycle() != 30; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(saved_cycle() == 30);
  CHECK(srv.server->worker().saves() >= 1);
  CHECK(srv.server->worker().saves() <= 3);
  {
    std::error_code ignored;  // a save may still be landing; leftovers are harmless
    fs::remove_all(dir, ignored);
  }
}
