// A brain whose state stops being finite (issue 36; docs/operating.md "A brain that stops being
// finite"), with the toy engine, which poisons a robot's state on request the way one huge
// input poisoned the real brain: the robot is told once with 4005, the event is logged once,
// the brain goes back to its last good save (or a fresh brain without one) and carries on, and
// that save is never overwritten by the poisoned state.
#include "test/support/catch.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app/server/protocol/handshake.h"
#include "app/server/protocol/robot_client.h"
#include "app/server/worker/state_files.h"
#include "test/server/captured_log.h"
#include "test/server/eventually.h"
#include "test/server/fresh_dir.h"
#include "test/server/json_robot.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

constexpr int kPoison = 77;  // sensor[0] that poisons the toy brain

ServerConfig poison_config(const std::string& state_dir, int save_every) {
  ServerConfig c = test_config();
  c.state_dir = state_dir;
  c.save_every_cycles = save_every;
  c.log_level = "info";
  return c;
}

// The save on disk, as the toy writes it: {"cycle": n, "trace": [...]} (-1 when unreadable).
nlohmann::json saved(const fs::path& file) {
  auto j = nlohmann::json::parse(std::ifstream(file), nullptr, false);
  return j.is_object() ? j : nlohmann::json{{"cycle", -1}};
}

bool finite_trace(const nlohmann::json& save) {
  if (!save.contains("trace") || !save["trace"].is_array()) return false;
  for (const auto& v : save["trace"]) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a brain that stops being finite goes back to its last good save, which is never "
          "overwritten", "[server][limits]") {
  auto dir = fresh_dir("fieldbrain-poison-restore");
  CapturedLog log;
  ToyServer srv(poison_config(dir.string(), 1));
  srv.engine.poison_on_sensor = kPoison;
  const fs::path file = dir / state_file_name("json:poisoned", ".toy");

  RobotClient c(srv.port());
  REQUIRE(json_handshake(c, "poisoned", 2, 2).has_value());
  for (int i = 0; i < 5; ++i) {
    const auto r = json_step(c, {0.5f, 0.1f * static_cast<float>(i)});
    REQUIRE(r.has_value());
    REQUIRE(r->value("type", "") == "motors");
  }
  REQUIRE(eventually([&] { return saved(file).value("cycle", -1) == 5; }));
  const nlohmann::json good = saved(file);
  REQUIRE(finite_trace(good));

  // The poisoning frame: an error naming what happened, instead of motors.
  const auto hit = json_step(c, {static_cast<float>(kPoison), 0.0f});
  REQUIRE(hit.has_value());
  INFO(hit->dump());
  CHECK(hit->value("type", "") == "error");
  CHECK(hit->value("code", 0) == kCodeBrainStateNotFinite);
  CHECK(hit->value("message", "").find("stopped being finite") != std::string::npos);

  // The robot carries on from its last good save: cycle 5 + 1, motors of the restored trace.
  std::vector<float> trace = good["trace"].get<std::vector<float>>();
  nlohmann::json reply;
  REQUIRE(eventually([&] {
    const auto r = json_step(c, {0.5f, 0.5f});
    if (!r || r->value("type", "") != "motors") return false;
    reply = *r;
    return r->value("cycle", 0) > 0;  // a safe stop (cycle 0) while the save loads
  }));
  INFO(reply.dump());
  CHECK(reply["cycle"] == 6);
  for (int i = 0; i < 2; ++i) trace[i] = 0.9f * trace[i] + 0.1f * 0.5f;
  CHECK(reply["values"].get<std::vector<float>>() == ToyEngine::motors_for(trace, 2));

  // The poisoned state never reached the disk; later saves are of the restored brain.
  REQUIRE(eventually([&] { return saved(file).value("cycle", -1) == 6; }));
  CHECK(finite_trace(saved(file)));
  CHECK(srv.server->stats().errors_with_code(kCodeBrainStateNotFinite) == 1);
  CHECK(log.count("stopped being finite") == 1);  // once, not once per cycle
  CHECK(log.count("restoring its last good save") == 1);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
}

TEST_CASE("without a save a non-finite brain is replaced by a fresh one, binary robots get a "
          "safe stop", "[server][limits]") {
  CapturedLog log;
  ToyServer srv(poison_config("", 0));
  srv.engine.poison_on_sensor = kPoison;
  RobotClient c(srv.port());
  REQUIRE(c.handshake(Framing::B, {1, 2, 3, 2, 0}).has_value());
  for (int i = 0; i < 3; ++i) REQUIRE(c.exchange(Framing::B, {0.5f, 0.25f}).has_value());
  const auto hit = c.exchange(Framing::B, {static_cast<float>(kPoison), 0.0f});
  REQUIRE(hit.has_value());
  CHECK(hit->values == std::vector<float>(3, 0.0f));  // the protocol's safe stop
  // A fresh brain: its first cycle's motors, exactly.
  const auto next = c.exchange(Framing::B, {0.5f, 0.25f});
  REQUIRE(next.has_value());
  CHECK(next->values == ToyEngine::motors_for({0.1f * 0.5f, 0.1f * 0.25f}, 3));
  CHECK(log.count("stopped being finite") == 1);
  CHECK(log.count("replaced by a fresh brain") == 1);
  CHECK(srv.server->stats().errors_with_code(kCodeBrainStateNotFinite) == 1);
}
