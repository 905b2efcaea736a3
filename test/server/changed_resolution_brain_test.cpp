// Issue 36 item 5: a save that is intact but was made for another configuration (here another
// resolution) is not corrupt. The robot is refused naming both resolutions, its save stays
// where it is, byte for byte, and going back to the save's resolution resumes the brain.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "app/server/protocol/handshake.h"
#include "app/server/protocol/robot_client.h"
#include "app/server/worker/state_files.h"
#include "test/server/fresh_dir.h"
#include "test/server/json_robot.h"
#include "test/server/real_brain_server.h"
#include "test/server/toy_engine.h"
#include "test/support/catch.h"
#include "test/support/files.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

// A brain config of `profile` ("fieldbrain" or "legacy") at `resolution`.
ServerConfig at_resolution(const fs::path& state, const std::string& profile, int resolution) {
  ServerConfig c = test_config();
  c.state_dir = state.string();
  c.brain = {{"profile", profile}, {"resolution", resolution}, {"seed", 7}};
  if (profile == "fieldbrain") c.brain["attractor_capacity"] = 4;
  return c;
}

const std::vector<float> kSensors = {0.1f, 0.2f, 0.3f, 0.4f};

// Files in `dir` whose name holds `part`.
int files_named(const fs::path& dir, const std::string& part) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().find(part) != std::string::npos;
  }
  return n;
}

}  // namespace

TEST_CASE("a save made at another resolution is kept and the robot refused until it matches",
          "[server][persistence]") {
  // One run per profile (GENERATE, not empty SECTIONs: an empty section asserts nothing).
  const std::string profile = GENERATE(as<std::string>{}, "fieldbrain", "legacy");
  const bool legacy = profile == "legacy";
  const std::string extension = legacy ? ".legacy.pt" : ".pt";
  const int trained_at = legacy ? 16 : 8, changed_to = 12;
  INFO("profile " << profile);
  const auto state = fresh_dir("fieldbrain-changed-resolution");
  const fs::path save = state / state_file_name("json:rover", extension);
  {
    RealBrainServer srv(at_resolution(state, profile, trained_at));
    RobotClient r(srv.server->port(), 30.0);
    REQUIRE(json_handshake(r, "rover", 4, 2).value()["type"] == "handshake");
    for (int i = 0; i < 15; ++i) REQUIRE(json_step(r, kSensors));
  }
  REQUIRE(fs::exists(save));
  const std::vector<char> trained = fieldbrain::test::file_bytes(save);

  {
    RealBrainServer srv(at_resolution(state, profile, changed_to));
    RobotClient r(srv.server->port(), 30.0);
    const nlohmann::json refused = json_handshake(r, "rover", 4, 2).value();
    INFO(refused.dump());
    CHECK(refused["type"] == "error");
    CHECK(refused["code"] == kCodePersistenceLoad);
    const std::string message = refused.value("message", "");
    CHECK(message.find("resolution") != std::string::npos);
    CHECK(message.find("resolution " + std::to_string(trained_at)) != std::string::npos);
    CHECK(message.find("resolution " + std::to_string(changed_to)) != std::string::npos);
    // Another robot is served as usual.
    RobotClient other(srv.server->port(), 30.0);
    CHECK(json_handshake(other, "scout", 4, 2).value()["type"] == "handshake");
  }
  // Not moved aside, not overwritten (not even by the shutdown's final saves).
  CHECK(files_named(state, ".corrupt-") == 0);
  REQUIRE(fs::exists(save));
  CHECK(fieldbrain::test::file_bytes(save) == trained);

  RealBrainServer srv(at_resolution(state, profile, trained_at));
  RobotClient r(srv.server->port(), 30.0);
  const nlohmann::json back = json_handshake(r, "rover", 4, 2).value();
  INFO(back.dump());
  CHECK(back["type"] == "handshake");
  CHECK(back["cycle"] == 15);
}
