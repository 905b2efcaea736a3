// A robot's trajectory depends only on its config, key and inputs: the same alone, inside a
// batch, in a step_group, and across a save/load.
#include "test/support/catch.h"

#include <filesystem>

#include "brain/field_brain.h"
#include "test/brain/brain_state.h"

namespace fieldbrain::test {

TEST_CASE("A robot's trajectory is the same alone and inside a batch", "[brain]") {
  at::set_num_threads(1);
  const auto config = small_config();
  const std::vector<uint64_t> keys{11, 12, 13};
  auto batch = make_brain(config, keys);
  auto alone = make_brain(config, {12});
  for (int64_t i = 0; i < 40; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    const auto mb = batch->step(s, r);
    const auto ma = alone->step(s.slice(0, 1, 2), r.slice(0, 1, 2));
    INFO("cycle " << i);
    REQUIRE(torch::equal(mb.slice(0, 1, 2), ma));
  }
  CHECK(torch::equal(batch->field().slice(0, 1, 2), alone->field()));
  CHECK(torch::equal(buffer(*batch, "prediction.pred").slice(0, 1, 2), buffer(*alone, "prediction.pred")));
}

TEST_CASE("step_group gives exactly what stepping each brain alone gives", "[brain]") {
  at::set_num_threads(1);
  const auto config = small_config();
  const std::vector<uint64_t> keys{21, 22, 23};
  std::vector<FieldBrain> grouped, separate;
  for (auto k : keys) {
    grouped.emplace_back(config, std::vector<uint64_t>{k});
    separate.emplace_back(config, std::vector<uint64_t>{k});
  }
  std::vector<FieldBrainImpl*> ptrs;
  for (auto& g : grouped) ptrs.push_back(g.get());
  for (int64_t i = 0; i < 30; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    // A robot joining late: the group at cycle 10 leaves brain 2 out for a while.
    const bool all = i < 10 || i >= 15;
    const auto mg = all ? FieldBrainImpl::step_group(ptrs, s, r)
                        : FieldBrainImpl::step_group({ptrs[0], ptrs[1]}, s.slice(0, 0, 2), r.slice(0, 0, 2));
    for (int64_t b = 0; b < (all ? 3 : 2); ++b) {
      const auto ms = separate[b]->step(s.slice(0, b, b + 1), r.slice(0, b, b + 1));
      INFO("cycle " << i << " robot " << b);
      REQUIRE(torch::equal(mg.slice(0, b, b + 1), ms));
    }
  }
  for (size_t b = 0; b < keys.size(); ++b) {
    INFO("robot " << b);
    CHECK(first_difference(snapshot(*grouped[b]), snapshot(*separate[b])).empty());
    CHECK(grouped[b]->cycle() == separate[b]->cycle());
  }
}

TEST_CASE("Save at cycle k, load into a fresh brain, continue: identical to never stopping", "[brain]") {
  at::set_num_threads(1);
  const auto config = small_config();
  const std::vector<uint64_t> keys{31, 32};
  const auto path = temp_path("resume.pt");
  auto original = make_brain(config, keys);
  for (int64_t i = 0; i < 12; ++i) original->step(test_sensors(i, keys, 24), test_reward(i, keys));
  original->save(path);

  auto resumed = make_brain(config, keys);
  resumed->step(test_sensors(99, keys, 24), test_reward(99, keys));  // diverge first
  resumed->load(path);
  CHECK(resumed->cycle() == 12);
  CHECK(first_difference(snapshot(*original), snapshot(*resumed)).empty());
  for (int64_t i = 12; i < 30; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    INFO("cycle " << i);
    REQUIRE(torch::equal(original->step(s, r), resumed->step(s, r)));
  }
  CHECK(first_difference(snapshot(*original), snapshot(*resumed)).empty());
  std::filesystem::remove(path);
}

TEST_CASE("Loading a corrupt or mismatched save throws and leaves the brain untouched", "[brain]") {
  const auto config = small_config();
  const auto path = temp_path("mismatch.pt");
  auto saved = make_brain(config, {41});
  saved->step(test_sensors(0, {41}, 24), test_reward(0, {41}));
  saved->save(path);

  SECTION("a different config") {
    auto other = make_brain(small_config(8, 20), {41});
    const auto before = snapshot(*other);
    CHECK_THROWS_WITH(other->load(path), Catch::Contains("config"));
    CHECK(first_difference(before, snapshot(*other)).empty());
  }
  SECTION("different robot keys") {
    auto other = make_brain(config, {42});
    const auto before = snapshot(*other);
    CHECK_THROWS_WITH(other->load(path), Catch::Contains("keys"));
    CHECK(first_difference(before, snapshot(*other)).empty());
  }
  SECTION("a missing file") {
    auto other = make_brain(config, {41});
    const auto before = snapshot(*other);
    CHECK_THROWS_AS(other->load(path + ".missing"), std::runtime_error);
    CHECK(first_difference(before, snapshot(*other)).empty());
  }
  SECTION("a truncated file") {
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    auto other = make_brain(config, {41});
    const auto before = snapshot(*other);
    CHECK_THROWS_AS(other->load(path), std::runtime_error);
    CHECK(first_difference(before, snapshot(*other)).empty());
  }
  std::filesystem::remove(path);
}

}  // namespace fieldbrain::test
