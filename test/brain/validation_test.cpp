// Bad input at the brain's edge: a clear std::invalid_argument naming the problem, and the
// brain's state (every buffer, the noise key (seed, cycle) included) exactly as before.
#include "test/support/catch.h"

#include <limits>

#include "brain/field_brain.h"
#include "test/brain/brain_state.h"

namespace fieldbrain::test {
namespace {

void expect_refused(FieldBrainImpl& brain, const torch::Tensor& sensors, const torch::Tensor& reward,
                    const std::string& fragment) {
  const auto before = snapshot(brain);
  std::string msg;
  try {
    brain.step(sensors, reward);
  } catch (const std::invalid_argument& e) {
    msg = e.what();
  }
  INFO("message: " << msg);
  CHECK_THAT(msg, Catch::Contains(fragment));
  CHECK(first_difference(before, snapshot(brain)).empty());
}

}  // namespace

TEST_CASE("Bad inputs are refused with the problem named and the state untouched", "[brain]") {
  const auto config = small_config();
  auto brain = make_brain(config, {1, 2});
  const std::vector<uint64_t> keys{1, 2};
  brain->step(test_sensors(0, keys, 24), test_reward(0, keys));  // some history first
  const auto good_s = test_sensors(1, keys, 24);
  const auto good_r = test_reward(1, keys);

  SECTION("sensors of the wrong width") {
    expect_refused(*brain, torch::zeros({2, 23}), good_r, "sensors has shape");
  }
  SECTION("sensors for the wrong number of robots") {
    expect_refused(*brain, torch::zeros({3, 24}), good_r, "sensors has shape");
  }
  SECTION("sensors of the wrong rank") {
    expect_refused(*brain, torch::zeros({48}), good_r, "sensors has shape");
  }
  SECTION("reward of the wrong shape") {
    expect_refused(*brain, good_s, torch::zeros({2, 1}), "reward has shape");
  }
  SECTION("integer sensors") {
    expect_refused(*brain, torch::zeros({2, 24}, torch::kInt), good_r, "dtype");
  }
  SECTION("a NaN sensor, named by position") {
    auto s = good_s.clone();
    s[1][5] = std::numeric_limits<float>::quiet_NaN();
    expect_refused(*brain, s, good_r, "sensors[1][5] is not finite");
  }
  SECTION("an infinite reward") {
    auto r = good_r.clone();
    r[0] = std::numeric_limits<float>::infinity();
    expect_refused(*brain, good_s, r, "reward[0] is not finite");
  }
  SECTION("after a refusal the brain continues exactly as if nothing happened") {
    auto twin = make_brain(config, keys);
    twin->step(test_sensors(0, keys, 24), test_reward(0, keys));
    CHECK_THROWS_AS(brain->step(torch::full({2, 24}, std::numeric_limits<float>::quiet_NaN()), good_r),
                    std::invalid_argument);
    CHECK(torch::equal(brain->step(good_s, good_r), twin->step(good_s, good_r)));
    CHECK(torch::equal(brain->field(), twin->field()));
  }
}

TEST_CASE("A bad config or an empty batch is refused at construction", "[brain]") {
  auto config = small_config();
  config.resolution = 200;
  CHECK_THROWS_WITH(make_brain(config, {0}), Catch::Contains("resolution"));
  config = small_config();
  config.sensory_dim = 0;
  CHECK_THROWS_WITH(make_brain(config, {0}), Catch::Contains("sensory_dim"));
  config = small_config();
  config.motor_dim = 1025;
  CHECK_THROWS_WITH(make_brain(config, {0}), Catch::Contains("motor_dim"));
  config = small_config();
  config.field_step = "warp-drive";
  CHECK_THROWS_WITH(make_brain(config, {0}), Catch::Contains("field_step"));
  CHECK_THROWS_AS(make_brain(small_config(), {}), std::invalid_argument);
}

TEST_CASE("step_group refuses mismatched brains and bad inputs", "[brain]") {
  auto a = make_brain(small_config(), {1});
  auto b = make_brain(small_config(), {2});
  auto wide = make_brain(small_config(8, 30), {3});
  auto pair = make_brain(small_config(), {4, 5});
  CHECK_THROWS_WITH(FieldBrainImpl::step_group({a.get(), wide.get()}, torch::zeros({2, 24}), torch::zeros({2})),
                    Catch::Contains("different configs"));
  CHECK_THROWS_WITH(FieldBrainImpl::step_group({a.get(), pair.get()}, torch::zeros({2, 24}), torch::zeros({2})),
                    Catch::Contains("one robot"));
  CHECK_THROWS_WITH(FieldBrainImpl::step_group({a.get(), a.get()}, torch::zeros({2, 24}), torch::zeros({2})),
                    Catch::Contains("twice"));
  const auto before = snapshot(*a);
  CHECK_THROWS_WITH(FieldBrainImpl::step_group({a.get(), b.get()}, torch::zeros({2, 25}), torch::zeros({2})),
                    Catch::Contains("sensors has shape"));
  CHECK(first_difference(before, snapshot(*a)).empty());
}

}  // namespace fieldbrain::test
