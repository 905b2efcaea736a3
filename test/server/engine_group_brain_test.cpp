// The real brain engine keeps the robots of one (S, M) as rows of one resident group: a robot
// stepped among others that come, go and miss ticks, saved by a snapshot and re-joined from
// its save through the loader path, gives exactly the motors of the same robot alone.
#include "test/support/catch.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "app/server/engine/torch_brain_engine.h"
#include "test/server/fresh_dir.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

namespace {

std::vector<float> sensors_of(int robot, int cycle, int S) {
  std::vector<float> s(S);
  for (int i = 0; i < S; ++i) s[i] = 0.6f * std::sin(0.2f * cycle + 0.9f * robot + 0.4f * i);
  return s;
}

// One tick over `slots` of one size; robot r's sensors at its own cycle count.
std::vector<float> tick(BrainEngine& engine, const std::vector<BrainEngine::Slot>& slots,
                        const std::vector<int>& robots, int S) {
  std::vector<float> sensors, rewards;
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto s = sensors_of(robots[i], static_cast<int>(engine.cycle(slots[i])), S);
    sensors.insert(sensors.end(), s.begin(), s.end());
    rewards.push_back(engine.cycle(slots[i]) % 5 == 2 ? 0.5f : 0.0f);
  }
  return engine.step_group(slots, sensors, rewards);
}

}  // namespace

TEST_CASE("with the real brain, a robot in a busy group moves exactly as the same robot alone",
          "[server]") {
  const nlohmann::json brain = {{"resolution", 8}, {"attractor_capacity", 4}, {"seed", 7}};
  auto solo = make_field_brain_engine(brain);
  auto busy = make_field_brain_engine(brain);
  const auto dir = fresh_dir("fieldbrain-engine-group");
  constexpr int S = 6, M = 3, kRover = 0;
  const BrainEngine::Slot alone = solo->create("rover", S, M);
  BrainEngine::Slot rover = busy->create("rover", S, M);
  BrainEngine::Slot a = busy->create("a", S, M);
  const BrainEngine::Slot b = busy->create("b", S, M);
  const BrainEngine::Slot wide = busy->create("wide", 8, 2);  // another size: another group
  for (int i = 0; i < 30; ++i) {
    if (i == 10) {  // the rover leaves with a snapshot and re-joins from its save
      const auto path = (dir / "rover.pt").string();
      busy->snapshot(rover)(path);
      busy->destroy(rover);
      rover = busy->adopt(busy->load_detached("rover", S, M, path));
    }
    if (i == 15) {
      busy->destroy(a);
      a = busy->create("c", S, M);
    }
    // b misses every third tick; the rover stands in different places of the call.
    std::vector<BrainEngine::Slot> slots{a};
    std::vector<int> robots{1};
    if (i % 3) {
      slots.push_back(b);
      robots.push_back(2);
    }
    const size_t at = static_cast<size_t>(i % 2) * slots.size();
    slots.insert(slots.begin() + static_cast<long>(at), rover);
    robots.insert(robots.begin() + static_cast<long>(at), kRover);
    const auto motors = tick(*busy, slots, robots, S);
    const auto expected = tick(*solo, {alone}, {kRover}, S);
    tick(*busy, {wide}, {3}, 8);
    INFO("tick " << i);
    REQUIRE(motors.size() == slots.size() * M);
    for (int k = 0; k < M; ++k) REQUIRE(motors[at * M + k] == expected[k]);
  }
  CHECK(busy->cycle(rover) == 30);
  CHECK(busy->telemetry(rover)["cycle"] == solo->telemetry(alone)["cycle"]);
  CHECK(busy->field_slice(rover, 3, 4) == solo->field_slice(alone, 3, 4));
  CHECK(busy->field_slice(rover, 3, 4) != busy->field_slice(b, 3, 4));
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}
