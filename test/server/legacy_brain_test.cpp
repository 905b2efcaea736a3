// The legacy profile served like any brain ("profile": "legacy", docs/legacy.md): a JSON robot
// and a binary robot cycle against it, its telemetry carries the original's fields, a saved
// legacy robot resumes where it left off, and each profile refuses the other's saves by name.
#include <spdlog/spdlog.h>

#include "test/support/catch.h"
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "app/server/session/server.h"
#include "app/server/worker/state_files.h"
#include "app/server/engine/torch_brain_engine.h"
#include "test/server/fresh_dir.h"
#include "test/server/json_robot.h"
#include "test/server/real_brain_server.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

// R = 16, the smallest size the original's fixtures cover.
nlohmann::json legacy_brain() { return {{"profile", "legacy"}, {"resolution", 16}, {"seed", 7}}; }

ServerConfig legacy_config(const std::string& state_dir = "") {
  ServerConfig c = test_config();
  c.brain = legacy_brain();
  c.state_dir = state_dir;
  return c;
}

std::vector<float> sensors_at(int cycle, int s) {
  std::vector<float> v(static_cast<size_t>(s));
  for (int i = 0; i < s; ++i) v[static_cast<size_t>(i)] = 0.5f + 0.4f * std::sin(0.3f * cycle + i);
  return v;
}

std::vector<float> json_motors(RobotClient& c, int cycle) {
  const auto reply = json_step(c, sensors_at(cycle, 12));
  REQUIRE(reply.has_value());
  REQUIRE(reply->value("type", "") == "motors");
  return (*reply)["values"].get<std::vector<float>>();
}

void wait_until_gone(Server& server) {
  for (int tries = 0; tries < 200 && !robot_keys(server).empty(); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

TEST_CASE("a legacy-profile server cycles a JSON robot and a binary robot", "[server][legacy]") {
  RealBrainServer srv(legacy_config());
  REQUIRE(srv.engine->describe().at("profile") == "legacy");

  RobotClient json(srv.server->port(), 60.0);
  REQUIRE(json_handshake(json, "legacy-json", 12, 6).has_value());
  RobotClient binary(srv.server->port(), 60.0);
  REQUIRE(binary.handshake(Framing::B, {1, 12, 6, 1, 3}).has_value());
  for (int cycle = 0; cycle < 6; ++cycle) {
    const auto m = json_motors(json, cycle);
    REQUIRE(m.size() == 6);
    for (float v : m) CHECK(std::isfinite(v));
    // The binary robot sends a reward as its 13th value (S + 1).
    std::vector<float> frame = sensors_at(cycle, 12);
    frame.push_back(0.5f);
    const auto reply = binary.exchange(Framing::B, frame);
    REQUIRE(reply.has_value());
    REQUIRE(reply->values.size() == 6);
    for (float v : reply->values) CHECK(std::isfinite(v));
  }
  // The original's brain state, the profile, the clock mode and the robot's seed.
  const nlohmann::json all = on_worker(*srv.server, [](BrainWorker& w) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : w.robots()) out.push_back(w.engine().telemetry(w.slot_of(r.id)));
    return out;
  });
  REQUIRE(all.size() == 2);
  for (const auto& t : all) {
    INFO(t.dump());
    CHECK(t.at("profile") == "legacy");
    CHECK(t.at("legacy_clock") == "fixed");
    CHECK(t.at("cycle") == 6);
    for (const char* key : {"prediction_confidence", "topology_regions", "cognitive_mode",
                            "field_energy", "seed", "cycle_time_ms"}) {
      CHECK(t.contains(key));
    }
  }
}

TEST_CASE("a saved legacy robot resumes where it left off", "[server][legacy]") {
  auto straight_dir = fresh_dir("fieldbrain-legacy-straight");
  auto bumpy_dir = fresh_dir("fieldbrain-legacy-bumpy");
  constexpr int kCycles = 10, kBreak = 4;
  std::vector<std::vector<float>> straight, bumpy;
  {
    RealBrainServer srv(legacy_config(straight_dir.string()));
    RobotClient c(srv.server->port(), 60.0);
    REQUIRE(json_handshake(c, "rover", 12, 6).has_value());
    for (int i = 0; i < kCycles; ++i) straight.push_back(json_motors(c, i));
  }
  {
    RealBrainServer srv(legacy_config(bumpy_dir.string()));
    {
      RobotClient c(srv.server->port(), 60.0);
      const auto hs = json_handshake(c, "rover", 12, 6);
      REQUIRE(hs.has_value());
      for (int i = 0; i < kBreak; ++i) bumpy.push_back(json_motors(c, i));
    }
    wait_until_gone(*srv.server);
  }
  // The save is the legacy brain's own archive, beside where a fieldbrain save would go.
  CHECK(fs::exists(bumpy_dir / state_file_name("json:rover", ".legacy.pt")));
  CHECK_FALSE(fs::exists(bumpy_dir / state_file_name("json:rover", ".pt")));
  {
    RealBrainServer srv(legacy_config(bumpy_dir.string()));  // across a server restart
    RobotClient c(srv.server->port(), 60.0);
    const auto hs = json_handshake(c, "rover", 12, 6);
    REQUIRE(hs.has_value());
    CHECK((*hs)["cycle"] == kBreak);
    for (int i = kBreak; i < kCycles; ++i) bumpy.push_back(json_motors(c, i));
    CHECK(srv.server->stats().errors_with_code(kCodePersistenceLoad) == 0);
  }
  REQUIRE(bumpy.size() == straight.size());
  for (size_t i = 0; i < straight.size(); ++i) {
    INFO("cycle " << i);
    for (size_t k = 0; k < 6; ++k) CHECK(bumpy[i][k] == straight[i][k]);
  }
  std::error_code ignored;
  fs::remove_all(straight_dir, ignored);
  fs::remove_all(bumpy_dir, ignored);
}

TEST_CASE("each profile refuses the other's save, naming the profile", "[server][legacy]") {
  spdlog::set_level(spdlog::level::off);
  auto dir = fresh_dir("fieldbrain-legacy-cross");
  const std::string legacy_save = (dir / "a.legacy.pt").string();
  const std::string fast_save = (dir / "b.pt").string();
  auto legacy = make_field_brain_engine(legacy_brain());
  auto fast = make_field_brain_engine({{"resolution", 16}, {"seed", 7}});
  const auto l = legacy->create("json:a", 12, 6);
  const auto f = fast->create("json:a", 12, 6);
  legacy->step_group({l}, sensors_at(0, 12), {0.0f});
  fast->step_group({f}, sensors_at(0, 12), {0.0f});
  legacy->save(l, legacy_save);
  fast->save(f, fast_save);

  SECTION("the fieldbrain profile refuses a legacy save") {
    CHECK_THROWS_WITH(fast->load(f, legacy_save), Catch::Contains("\"legacy\" profile"));
    CHECK_THROWS_WITH(fast->load_detached("json:a", 12, 6, legacy_save),
                      Catch::Contains("\"legacy\" profile"));
    CHECK(fast->cycle(f) == 1);
  }
  SECTION("the legacy profile refuses a fieldbrain save") {
    CHECK_THROWS_WITH(legacy->load(l, fast_save), Catch::Contains("\"fieldbrain\" profile"));
    CHECK_THROWS_WITH(legacy->load_detached("json:a", 12, 6, fast_save),
                      Catch::Contains("\"fieldbrain\" profile"));
    CHECK(legacy->cycle(l) == 1);
  }
  SECTION("each loads its own, through a snapshot too") {
    legacy->snapshot(l)(legacy_save);
    auto again = legacy->load_detached("json:a", 12, 6, legacy_save);
    const auto slot = legacy->adopt(std::move(again));
    CHECK(legacy->cycle(slot) == 1);
    CHECK_NOTHROW(fast->load(f, fast_save));
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("the legacy profile refuses the GPU at start-up, naming the key", "[server][legacy]") {
  nlohmann::json brain = legacy_brain();
  brain["device"] = "cuda";
  CHECK_THROWS_WITH(make_field_brain_engine(brain),
                    Catch::Contains("device") && Catch::Contains("legacy"));
}
