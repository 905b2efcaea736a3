// The legacy profile steps a tick's robots in parallel, one robot per thread
// ("legacy_threads", app/server/engine/legacy_step_pool.h). Each robot must still be the
// original's brain of its run alone: a robot stepped among four on four threads gives, bit for
// bit, the motors and the field of the same robot stepped alone on one thread.
#include "test/support/catch.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "app/server/engine/torch_brain_engine.h"
#include "brain/brain_config.h"

using namespace fieldbrain::server;

namespace {

constexpr int kS = 12, kM = 6, kR = 16;

nlohmann::json legacy_brain(int threads) {
  // Rewards appended, so the reward attractors (the cycle's largest shared-looking state) run.
  return {{"profile", "legacy"}, {"resolution", kR},          {"seed", 42},
          {"legacy_reward", "append"}, {"legacy_threads", threads}};
}

// Robot r's input at cycle n: each robot its own stream, so a mix-up between robots shows.
void input_of(int robot, int64_t n, std::vector<float>& sensors, std::vector<float>& rewards) {
  for (int i = 0; i < kS; ++i) {
    sensors.push_back(0.6f * std::sin(0.15f * static_cast<float>(n) + 0.9f * robot + 0.5f * i));
  }
  rewards.push_back(0.8f * std::sin(0.25f * static_cast<float>(n) + robot));
}

std::vector<float> tick(BrainEngine& engine, const std::vector<BrainEngine::Slot>& slots,
                        const std::vector<int>& robots) {
  std::vector<float> sensors, rewards;
  for (size_t i = 0; i < slots.size(); ++i) input_of(robots[i], engine.cycle(slots[i]), sensors, rewards);
  return engine.step_group(slots, sensors, rewards);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The whole field, [x][y] planes of every channel and z, as the monitor reads it.
std::vector<float> whole_field(BrainEngine& engine, BrainEngine::Slot slot) {
  std::vector<float> out;
  for (int c = 0; c < 64; ++c) {
    for (int z = 0; z < kR; ++z) {
      for (const auto& row : engine.field_slice(slot, c, z).at("values")) {
        for (const auto& v : row) out.push_back(v.get<float>());
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a legacy robot stepped among four on four threads is bit for bit the robot alone",
          "[server][legacy]") {
  const std::vector<std::string> keys = {"rover-a", "rover-b", "rover-c", "rover-d"};
  auto busy = make_field_brain_engine(legacy_brain(4));
  std::vector<BrainEngine::Slot> slots;
  for (const auto& key : keys) slots.push_back(busy->create(key, kS, kM));
  const std::vector<int> robots = {0, 1, 2, 3};

  // Each robot alone, one thread, its own engine.
  std::vector<std::unique_ptr<BrainEngine>> solo;
  std::vector<BrainEngine::Slot> alone;
  for (const auto& key : keys) {
    solo.push_back(make_field_brain_engine(legacy_brain(1)));
    alone.push_back(solo.back()->create(key, kS, kM));
  }

  constexpr int kCycles = 24;
  int differing_cycles = 0;
  bool robots_differ = false;
  for (int n = 0; n < kCycles; ++n) {
    const std::vector<float> together = tick(*busy, slots, robots);
    REQUIRE(together.size() == keys.size() * kM);
    for (size_t r = 0; r < keys.size(); ++r) {
      const std::vector<float> mine(together.begin() + static_cast<std::ptrdiff_t>(r * kM),
                                    together.begin() + static_cast<std::ptrdiff_t>((r + 1) * kM));
      const std::vector<float> by_itself = tick(*solo[r], {alone[r]}, {robots[r]});
      if (!same_bits(mine, by_itself)) ++differing_cycles;
      if (r > 0 && !same_bits(mine, std::vector<float>(together.begin(), together.begin() + kM))) {
        robots_differ = true;
      }
    }
  }
  CHECK(differing_cycles == 0);
  CHECK(robots_differ);  // four brains, not one brain's motors copied four times
  for (size_t r = 0; r < keys.size(); ++r) {
    INFO("robot " << keys[r]);
    CHECK(busy->cycle(slots[r]) == kCycles);
    CHECK(same_bits(whole_field(*busy, slots[r]), whole_field(*solo[r], alone[r])));
  }
}

TEST_CASE("a refused input in a parallel legacy tick leaves that robot untouched and names it",
          "[server][legacy]") {
  auto engine = make_field_brain_engine(legacy_brain(2));
  const std::vector<BrainEngine::Slot> slots = {engine->create("ok-1", kS, kM),
                                                engine->create("bad", kS, kM),
                                                engine->create("ok-2", kS, kM)};
  std::vector<float> sensors, rewards;
  for (int r = 0; r < 3; ++r) input_of(r, 0, sensors, rewards);
  sensors[kS + 3] = 20.0f;  // robot 1: outside the original's [-10, 10]
  try {
    engine->step_group(slots, sensors, rewards);
    FAIL("the refused input was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("robot 1 of the group"));
  }
  CHECK(engine->cycle(slots[0]) == 1);
  CHECK(engine->cycle(slots[1]) == 0);
  CHECK(engine->cycle(slots[2]) == 1);
}

TEST_CASE("legacy_threads is checked at start-up, naming the key", "[server][legacy][config]") {
  const auto error_of = [](const nlohmann::json& brain) -> std::string {
    try {
      (void)brain.get<fieldbrain::BrainConfig>();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_threads", -1}}),
             Catch::Contains("brain.legacy_threads"));
  CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_threads", 5000}}),
             Catch::Contains("brain.legacy_threads"));
  CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_threads", "many"}}),
             Catch::Contains("legacy_threads"));
  // Without the legacy profile it would do nothing: refused.
  CHECK_THAT(error_of({{"legacy_threads", 2}}), Catch::Contains("brain.legacy_threads"));
  CHECK(error_of({{"profile", "legacy"}, {"legacy_threads", 3}}).empty());
  CHECK(error_of({{"profile", "legacy"}}).empty());  // default 0: the cores
}
