// Behaviour of the brain's public surface: one host sync per cycle, motors in (-1,1),
// construction from the documented seeds, telemetry and field slices.
#include "test/support/catch.h"

#include "brain/field_brain.h"
#include "brain/sync_counter.h"
#include "test/brain/brain_state.h"

namespace fieldbrain::test {

TEST_CASE("A cycle makes exactly one device-to-host copy: the motors", "[brain]") {
  const std::vector<uint64_t> keys{1, 2};
  auto brain = make_brain(small_config(8, 24, 6), keys);
  for (int64_t i = 0; i < 6; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    const auto before = SyncCounter::count();
    brain->step(s, r);
    INFO("cycle " << i);
    CHECK(SyncCounter::count() - before == 1);
  }
  const auto before = SyncCounter::count();
  brain->telemetry(1);
  CHECK(SyncCounter::count() - before == 1);
}

TEST_CASE("step_group also makes one copy per tick", "[brain]") {
  auto a = make_brain(small_config(), {1});
  auto b = make_brain(small_config(), {2});
  const auto before = SyncCounter::count();
  FieldBrainImpl::step_group({a.get(), b.get()}, test_sensors(0, {1, 2}, 24), test_reward(0, {1, 2}));
  CHECK(SyncCounter::count() - before == 1);
}

TEST_CASE("Motors are M values in (-1,1) for every robot, also with M > 4 and M = 1", "[brain]") {
  for (int64_t M : {1, 3, 4, 9}) {
    auto brain = make_brain(small_config(8, 5, M), {3, 4, 5});
    for (int64_t i = 0; i < 5; ++i) {
      const auto m = brain->step(test_sensors(i, {3, 4, 5}, 5), test_reward(i, {3, 4, 5}));
      INFO("M " << M << " cycle " << i);
      REQUIRE(m.sizes() == torch::IntArrayRef({3, M}));
      REQUIRE(m.device().is_cpu());
      REQUIRE(m.abs().max().item<float>() < 1.0f);
      REQUIRE(torch::isfinite(m).all().item<bool>());
    }
  }
}

TEST_CASE("The returned motors are the caller's own tensor", "[brain]") {
  auto brain = make_brain(small_config(), {1});
  auto m = brain->step(test_sensors(0, {1}, 24), test_reward(0, {1}));
  const auto kept = buffer(*brain, "motors.motor").clone();
  m.fill_(7.0f);
  CHECK(torch::equal(buffer(*brain, "motors.motor"), kept));
}

TEST_CASE("Robots are seeded from (seed, key): same key same field, other key other field", "[brain]") {
  auto a = make_brain(small_config(), {5, 6});
  auto b = make_brain(small_config(), {6});
  auto other_seed = small_config();
  other_seed.seed += 1;
  auto c = make_brain(other_seed, {6});
  CHECK(torch::equal(a->field()[1], b->field()[0]));
  CHECK_FALSE(torch::equal(a->field()[0], a->field()[1]));
  CHECK_FALSE(torch::equal(b->field(), c->field()));
}

TEST_CASE("robot_seed is the splitmix64 finaliser of docs/cycle.md", "[brain]") {
  // Independent check of the formula with the constants spelled out once more.
  auto mix = [](uint64_t seed, uint64_t key) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (key + 1);
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return z & ((1ULL << 63) - 1);
  };
  for (uint64_t key : {0ULL, 1ULL, 77ULL, ~0ULL}) CHECK(robot_seed(42, key) == mix(42, key));
  CHECK(robot_seed(42, 0) != robot_seed(42, 1));
  CHECK(robot_seed(42, 0) >> 63 == 0);
}

TEST_CASE("Telemetry reports the cycle and the legacy section 9 metrics", "[brain]") {
  const std::vector<uint64_t> keys{8, 9};
  auto brain = make_brain(small_config(), keys);
  for (int64_t i = 0; i < 4; ++i) brain->step(test_sensors(i, keys, 24), torch::tensor({0.0f, 0.5f}));
  const auto t = brain->telemetry(1);
  CHECK(t.at("cycle") == 4);
  for (const char* key : {"field_information", "max_activation", "prediction_confidence", "novelty",
                          "exploration_drive", "internal_drive", "imprint_strength", "decay_rate",
                          "smoothed_information", "smoothed_confidence", "self_modification_strength",
                          "cycle_time_ms"}) {
    INFO(key);
    REQUIRE(t.contains(key));
    CHECK(std::isfinite(t.at(key).get<double>()));
  }
  const auto F = brain->field()[1].abs();
  CHECK(t.at("field_information").get<double>() == Approx(F.mean().item<double>()).epsilon(1e-6));
  CHECK(t.at("max_activation").get<double>() == Approx(F.max().item<double>()).epsilon(1e-6));
  CHECK(t.at("prediction_confidence").get<double>() ==
        Approx(buffer(*brain, "prediction.conf")[1].item<double>()));
  CHECK(t.at("attractors") == 4);  // robot 1 was rewarded every cycle (0.5 > 0.1), capacity 4
  CHECK(brain->telemetry(0).at("attractors") == 0);
  CHECK_THROWS_AS(brain->telemetry(2), std::invalid_argument);
}

TEST_CASE("field_slice returns one z plane of one channel on the CPU", "[brain]") {
  auto brain = make_brain(small_config(), {1, 2});
  brain->step(test_sensors(0, {1, 2}, 24), test_reward(0, {1, 2}));
  const auto s = brain->field_slice(1, 40, 3);
  CHECK(s.sizes() == torch::IntArrayRef({8, 8}));
  CHECK(torch::equal(s, brain->field()[1][40].select(2, 3)));
  CHECK_THROWS_AS(brain->field_slice(2, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(brain->field_slice(0, 64, 0), std::invalid_argument);
  CHECK_THROWS_AS(brain->field_slice(0, 0, 8), std::invalid_argument);
}

}  // namespace fieldbrain::test
