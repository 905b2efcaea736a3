// The real engine's tick reuses its buffers: once every kind of cycle has been seen, a tick of
// the fast profile on the CPU asks the tensor allocator for nothing, whatever order the worker
// lists the robots in (BrainGroup::step_into into one motors buffer per group); and
// BrainGroup::step_into refuses a motors buffer it cannot write before any robot steps.
//
// LibTorch is included before Catch2 (glog's CHECK would replace Catch2's), so this file is
// compiled on its own, outside the unity batches (test/server/CMakeLists.txt).
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "app/server/engine/torch_brain_engine.h"
#include "brain/brain_group.h"
#include "brain/ops/allocation_counter.h"
#include "test/support/catch.h"

using namespace fieldbrain::server;

namespace {

constexpr int S = 6, M = 3;
// The inputs repeat every kPeriod ticks: rewards of both signs (attractor slots stored, aged,
// pulling) and a silent tick (all sensors zero).
constexpr int kPeriod = 14;

std::vector<float> sensors_of(int robot, int tick) {
  std::vector<float> s(S, 0.0f);
  if (tick % kPeriod == 5) return s;
  for (int i = 0; i < S; ++i)
    s[i] = 0.6f * std::sin(0.5f * (tick % kPeriod) + 0.9f * robot + 0.4f * i);
  return s;
}

float reward_of(int tick) {
  const int t = tick % kPeriod;
  if (t % 7 != 2) return 0.0f;
  return t < 7 ? 0.5f : -0.5f;
}

// One tick over the robots in the order `order` (indices into `slots`): the worker's call.
void tick(BrainEngine& engine, const std::vector<BrainEngine::Slot>& slots,
          const std::vector<int>& order, int t, std::vector<BrainEngine::Slot>& ids,
          std::vector<float>& sensors, std::vector<float>& rewards, std::vector<float>& motors) {
  ids.clear();
  sensors.clear();
  rewards.clear();
  for (int r : order) {
    ids.push_back(slots[r]);
    const auto s = sensors_of(r, t);
    sensors.insert(sensors.end(), s.begin(), s.end());
    rewards.push_back(reward_of(t));
  }
  engine.step_group_into(ids, sensors, rewards, motors);
}

}  // namespace

TEST_CASE("A steady tick of the real engine (fast, CPU) creates no tensor, in any robot order",
          "[server][allocation]") {
  const nlohmann::json brain = {
      {"resolution", 16}, {"attractor_capacity", 4}, {"seed", 11}, {"field_step", "fast"}};
  auto engine = make_field_brain_engine(brain);
  auto twin = make_field_brain_engine(brain);  // the same robots, always stepped in one order
  std::vector<BrainEngine::Slot> slots, twin_slots;
  for (const char* key : {"a", "b", "c"}) {
    slots.push_back(engine->create(key, S, M));
    twin_slots.push_back(twin->create(key, S, M));
  }
  // The worker lists a tick's robots in the order their frames arrived: it changes.
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}};
  const std::vector<int> fixed = {0, 1, 2};
  std::vector<BrainEngine::Slot> ids, twin_ids;
  std::vector<float> sensors, rewards, motors, twin_sensors, twin_rewards, twin_motors;
  int t = 0;
  auto both = [&] {
    const auto& order = orders[t % orders.size()];
    tick(*engine, slots, order, t, ids, sensors, rewards, motors);
    tick(*twin, twin_slots, fixed, t, twin_ids, twin_sensors, twin_rewards, twin_motors);
    INFO("tick " << t);
    REQUIRE(motors.size() == 3u * M);
    // Row i of the call is robot order[i]: its motors are the twin's for that robot.
    for (size_t i = 0; i < order.size(); ++i) {
      for (int j = 0; j < M; ++j) REQUIRE(motors[i * M + j] == twin_motors[order[i] * M + j]);
    }
    ++t;
  };
  // Every kind of tick, in every order, before counting (the cycle of orders x inputs is 28).
  for (int i = 0; i < 2 * 28; ++i) both();

  fieldbrain::ops::AllocationCounter requests;
  for (int i = 0; i < 28; ++i) {
    const auto& order = orders[t % orders.size()];
    tick(*engine, slots, order, t, ids, sensors, rewards, motors);
    ++t;
  }
  CHECK(requests.count() == 0);

  // Positive control: a tick with more robots than the buffer holds grows it (one tensor).
  slots.push_back(engine->create("d", S, M));
  requests.reset();
  tick(*engine, slots, {0, 1, 2, 3}, t, ids, sensors, rewards, motors);
  CHECK(requests.count() > 0);
  CHECK(motors.size() == 4u * M);
}

TEST_CASE(
    "BrainGroup::step_into refuses a motors buffer of the wrong shape, type or layout and "
    "steps nothing",
    "[server]") {
  fieldbrain::BrainConfig config;
  config.sensory_dim = S;
  config.motor_dim = M;
  config.resolution = 8;
  config.field_step = "fast";
  fieldbrain::BrainGroup group(config);
  const auto a = group->claim(uint64_t{1});
  const auto b = group->claim(uint64_t{2});
  const auto sensors = torch::zeros({2, S});
  const auto reward = torch::zeros({2});
  for (auto bad : {torch::empty({2, M + 1}), torch::empty({2, M}, torch::kDouble),
                   torch::empty({M, 2}).t(), torch::empty({1, M}), torch::Tensor()}) {
    CHECK_THROWS_WITH(group->step_into({a, b}, sensors, reward, bad),
                      Catch::Contains("motors must be"));
  }
  CHECK(group->cycle(a) == 0);
  CHECK(group->cycle(b) == 0);
  auto motors = torch::empty({2, M});
  group->step_into({b, a}, sensors, reward, motors);
  CHECK(group->cycle(a) == 1);
  CHECK(group->cycle(b) == 1);
}
