// Record and replay: a robot's session through the in-process server with --record (the real
// field brain, R = 8), read back from disk, and replayed through a fresh brain with the same
// key and seed: 0 difference on the reference path, within 1e-5 of the Python reference.
#include "test/support/catch.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "app/fieldbrain/recording.h"
#include "app/fieldbrain/replay.h"
#include "app/server/protocol/robot_client.h"
#include "app/server/session/server.h"
#include "app/server/engine/torch_brain_engine.h"

using namespace fieldbrain;
using namespace fieldbrain::server;
namespace fs = std::filesystem;

namespace {

constexpr int kCycles = 25, kS = 6, kM = 3;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

ServerConfig recording_config(const fs::path& record_dir) {
  ServerConfig c;
  c.host = "127.0.0.1";
  c.port = 0;
  c.monitor_port = -1;
  c.state_dir = "";  // a fresh brain every time: what replay needs
  c.record_dir = record_dir.string();
  c.brain = {{"resolution", 8}, {"attractor_capacity", 4}, {"seed", 11}, {"field_step", "reference"}};
  return c;
}

struct Sent {
  std::vector<std::vector<float>> sensors, motors;
  std::vector<float> rewards;
};

// One JSON-lines robot, kCycles cycles of varying sensors and rewards (some strong enough to
// store reward attractors), through a server that records.
Sent run_recorded_session(const ServerConfig& c, int sensory_dim = kS, int motor_dim = kM) {
  spdlog::set_level(spdlog::level::off);
  auto engine = make_field_brain_engine(c.brain);
  Sent sent;
  {
    Server server(c, *engine);
    server.start();
    RobotClient robot(server.port(), 30.0);
    robot.send_text(nlohmann::json{{"type", "handshake"},
                                   {"robot_id", "rec-1"},
                                   {"sensory_dim", sensory_dim},
                                   {"motor_dim", motor_dim}}
                        .dump() +
                    "\n");
    REQUIRE(robot.read_line());
    for (int i = 0; i < kCycles; ++i) {
      std::vector<float> s(static_cast<size_t>(sensory_dim));
      for (int j = 0; j < sensory_dim; ++j) s[j] = 0.6f * std::sin(0.37f * i + 1.3f * j);
      const float reward = (i % 7 == 3) ? 0.8f : 0.02f * i;
      robot.send_text(nlohmann::json{{"type", "sensors"}, {"values", s}, {"reward", reward}}.dump() +
                      "\n");
      const auto line = robot.read_line();
      REQUIRE(line);
      const auto reply = nlohmann::json::parse(*line);
      REQUIRE(reply["type"] == "motors");
      sent.sensors.push_back(s);
      sent.rewards.push_back(reward);
      sent.motors.push_back(reply["values"].get<std::vector<float>>());
    }
    server.stop();
  }  // the server and its recorder are gone: every file is complete
  return sent;
}

fs::path only_session(const fs::path& record_dir) {
  std::vector<fs::path> sessions;
  for (const auto& e : fs::directory_iterator(record_dir)) sessions.push_back(e.path());
  REQUIRE(sessions.size() == 1);
  return sessions[0];
}

}  // namespace

TEST_CASE("a recorded session replays to the motors the server sent", "[replay][parity]") {
  const fs::path dir = fresh_dir("fieldbrain-record");
  const Sent sent = run_recorded_session(recording_config(dir));
  const fs::path session = only_session(dir);
  CHECK(session.filename().string().rfind("rec-1-", 0) == 0);

  const Recording r = load_recording(session.string());
  CHECK(r.meta["complete"] == true);
  CHECK(r.robot_key == "rec-1");
  REQUIRE(r.cycles == kCycles);
  REQUIRE(r.sensory_dim == kS);
  REQUIRE(r.motor_dim == kM);
  CHECK(r.meta["brain"]["seed"] == 11);
  for (int i = 0; i < kCycles; ++i) {
    for (int j = 0; j < kS; ++j) CHECK(r.sensors[i * kS + j] == sent.sensors[i][j]);
    CHECK(r.reward[i] == sent.rewards[i]);
    for (int j = 0; j < kM; ++j) CHECK(r.motors[i * kM + j] == sent.motors[i][j]);
  }

  SECTION("the reference path reproduces every cycle exactly") {
    const ReplayReport rep = replay_recording(r, {});
    CHECK(rep.field_step == "reference");
    CHECK(rep.cycles == kCycles);
    CHECK(rep.vs_recording.diff == 0.0);
    CHECK(rep.ok());
  }
  SECTION("the fused field step stays within the fast-path tolerance") {
    ReplayOptions o;
    o.field_step = "fast";
    const ReplayReport rep = replay_recording(r, o);
    CHECK(rep.tolerance == 1e-4);
    CHECK(rep.vs_recording.diff <= 1e-4);
  }
  SECTION("the Python reference agrees on the same inputs") {
    ReplayOptions o;
    o.python = true;
    const ReplayReport rep = replay_recording(r, o);
    REQUIRE(rep.python_ran);
    CHECK(rep.python_vs_recording.diff <= 1e-5);
    CHECK(rep.vs_python.diff <= 1e-5);
    CHECK(rep.ok());
  }
  SECTION("a tampered recording is caught") {
    Recording bad = r;
    bad.motors[10 * kM + 1] += 0.01f;
    const ReplayReport rep = replay_recording(bad, {});
    CHECK(rep.vs_recording.cycle == 10);
    CHECK(rep.vs_recording.diff == Approx(0.01).margin(1e-6));
    CHECK_FALSE(rep.ok());
  }
  SECTION("a session that resumed a saved brain is refused") {
    Recording resumed = r;
    resumed.start_cycle = 100;
    CHECK_THROWS_WITH(replay_recording(resumed, {}), Catch::Contains("resumed"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a legacy-profile session replays to the motors the server sent", "[replay][legacy]") {
  const fs::path dir = fresh_dir("fieldbrain-record-legacy");
  ServerConfig c = recording_config(dir);
  // The PiCar-X sizes; rewards reach the original (legacy_reward "append").
  c.brain = {{"profile", "legacy"}, {"resolution", 16}, {"seed", 11}, {"legacy_reward", "append"}};
  const Sent sent = run_recorded_session(c, 12, 6);
  const Recording r = load_recording(only_session(dir).string());
  REQUIRE(r.cycles == kCycles);
  CHECK(r.meta["brain"]["profile"] == "legacy");
  const ReplayReport rep = replay_recording(r, {});
  CHECK(rep.field_step == "legacy profile");
  CHECK(rep.tolerance == 1e-5);
  CHECK(rep.vs_recording.diff == 0.0);
  CHECK(rep.ok());
  ReplayOptions python;
  python.python = true;
  CHECK_THROWS_WITH(replay_recording(r, python), Catch::Contains("compare-original"));
  fs::remove_all(dir);
}

TEST_CASE("record_dir is a config key, and a folder that cannot be created stops the server",
          "[replay]") {
  const auto parsed = nlohmann::json::parse(R"({"record_dir": "recs"})").get<ServerConfig>();
  CHECK(parsed.record_dir == "recs");
  CHECK(ServerConfig{}.record_dir.empty());  // off unless asked for
  const fs::path dir = fresh_dir("fieldbrain-record-bad");
  std::ofstream(dir / "a-file") << "x";
  ServerConfig c = recording_config(dir / "a-file" / "sub");
  auto engine = make_field_brain_engine(c.brain);
  CHECK_THROWS_WITH(Server(c, *engine), Catch::Contains("record_dir"));
  fs::remove_all(dir);
}
