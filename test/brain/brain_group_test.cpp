// BrainGroup: robots as rows of one resident batch. A robot in the group is the same robot
// alone, bit for bit, whoever joins or leaves; a steady tick moves no robot's state; rows are
// claimed, released and reused; capacity doubles keeping every robot's state.
#include "test/support/catch.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "brain/brain_group.h"
#include "brain/robot_rows.h"
#include "brain/sync_counter.h"
#include "test/brain/brain_state.h"
#include "test/brain/group_twins.h"

namespace fieldbrain::test {

TEST_CASE("A robot in a group is the same robot alone, bit for bit, as others join and leave",
          "[brain][group]") {
  at::set_num_threads(1);
  auto config = small_config();
  // Both paths: the fast one keeps per-robot scratch (the fused read-out) that must follow the
  // row views too.
  config.field_step = GENERATE(as<std::string>(), "reference", "fast");
  INFO("field_step " << config.field_step);
  BrainGroup group(config, 1);
  std::map<uint64_t, Twin> twins;
  auto join = [&](uint64_t key) {
    twins.emplace(key, join_twin(*group, config, key));
  };
  auto leave = [&](uint64_t key) {
    check_same_state(*group, twins.at(key));
    group->release(twins.at(key).row);
    twins.erase(key);
  };
  join(51);
  for (int64_t i = 0; i < 36; ++i) {
    if (i == 3) join(52);
    if (i == 6) join(53);  // capacity 1 -> 2 -> 4
    if (i == 12) leave(52);
    if (i == 14) join(54);  // reuses the freed row
    if (i == 20) join(55);
    if (i == 26) leave(51);
    std::vector<Twin*> ready;
    for (auto& [key, t] : twins) {
      // Robot 53 misses every third tick and 54 ticks 22-24: the ready set changes often.
      if (key == 53 && i % 3 == 0) continue;
      if (key == 54 && i >= 22 && i < 25) continue;
      ready.push_back(&t);
    }
    if (i % 2) std::reverse(ready.begin(), ready.end());  // caller order is free
    tick(*group, ready, config.sensory_dim);
  }
  CHECK(group->capacity() == 4);
  for (auto& [key, t] : twins) check_same_state(*group, t);
}

TEST_CASE("A steady tick copies no robot state and keeps every row where it is", "[brain][group]") {
  at::set_num_threads(1);
  const auto config = small_config();
  BrainGroup group(config, 4);
  std::vector<BrainGroupImpl::Row> rows;
  for (uint64_t key : {61, 62, 63}) rows.push_back(group->claim(key));
  const int64_t S = config.sensory_dim;
  auto step = [&](const std::vector<BrainGroupImpl::Row>& which, int64_t cycle) {
    std::vector<uint64_t> keys(which.size(), 1);
    group->step(which, test_sensors(cycle, keys, S), test_reward(cycle, keys));
  };
  auto pointers = [&] {
    std::vector<const void*> out;
    for (auto r : rows) out.push_back(group->field(r).data_ptr());
    return out;
  };
  const int64_t after_joining = group->row_copies();
  CHECK(after_joining == 3);  // each robot's state copied in once

  // Robots 0 and 2 ready: 2 sits outside the prefix [0,2) and is swapped in, once.
  step({rows[0], rows[2]}, 0);
  const int64_t after_change = group->row_copies();
  CHECK(after_change > after_joining);
  const auto where = pointers();
  const auto field_before = group->field(rows[2]).clone();
  for (int64_t i = 1; i < 6; ++i)
    step(i % 2 ? std::vector{rows[2], rows[0]} : std::vector{rows[0], rows[2]}, i);
  CHECK(group->row_copies() == after_change);
  CHECK(pointers() == where);
  CHECK_FALSE(torch::equal(group->field(rows[2]), field_before));  // it did cycle, in place

  // The same holds for the whole group once it is the steady set.
  step(rows, 6);
  const int64_t all_ready = group->row_copies();
  const auto where_all = pointers();
  SyncCounter::reset();
  for (int64_t i = 7; i < 10; ++i) step(rows, i);
  CHECK(SyncCounter::count() == 3);  // one device-to-host copy per tick: the motors
  CHECK(group->row_copies() == all_ready);
  CHECK(pointers() == where_all);
}

TEST_CASE("Robots whose rows already form one range cycle in place, one at a time or as "
          "neighbours, as the same robots alone",
          "[brain][group]") {
  // A server whose robots' frames arrive one at a time steps them singly, in turn: each single
  // row is a range, so nothing moves (brain/brain_group.h), and the fast cycle's attractor
  // shadow stays fresh (nothing wrote the bank from outside).
  at::set_num_threads(1);
  auto config = small_config();
  config.field_step = GENERATE(as<std::string>(), "reference", "fast");
  INFO("field_step " << config.field_step);
  BrainGroup group(config, 4);
  std::map<uint64_t, Twin> twins;
  for (uint64_t key : {81, 82, 83}) {
    twins.emplace(key, join_twin(*group, config, key));
  }
  Twin &a = twins.at(81), &b = twins.at(82), &c = twins.at(83);
  auto pointers = [&] {
    std::vector<const void*> out;
    for (Twin* t : {&a, &b, &c}) out.push_back(group->field(t->row).data_ptr());
    return out;
  };
  const int64_t after_joining = group->row_copies();
  const auto where = pointers();
  const std::vector<std::vector<Twin*>> turns{{&b}, {&c}, {&a}, {&b, &c}, {&c, &b}, {&a, &b}};
  // 36 ticks: test_reward stores into every robot's slots, which then pull.
  for (int64_t i = 0; i < 36; ++i) tick(*group, turns[i % turns.size()], config.sensory_dim);
  CHECK(group->row_copies() == after_joining);
  CHECK(pointers() == where);
  for (Twin* t : {&a, &b, &c}) check_same_state(*group, *t);
}

TEST_CASE("Reading one robot of a group writes nothing: its state keeps its version counter",
          "[brain][group]") {
  // A read-out views the robot's row (brain/robot_rows.h) by moving the buffers' metadata; it
  // must not count as a write, or the fast cycle takes it for an outside write of the
  // attractor bank and rebuilds every robot's shadow (docs/cycle.md "What a reward costs").
  at::set_num_threads(1);
  auto config = small_config();
  config.field_step = "fast";
  BrainGroup group(config, 4);
  const std::vector<uint64_t> keys{91, 92, 93};
  std::vector<BrainGroupImpl::Row> rows;
  for (uint64_t k : keys) rows.push_back(group->claim(k));
  for (int64_t i = 0; i < 4; ++i) {
    group->step(rows, test_sensors(i, keys, config.sensory_dim), test_reward(i, keys));
  }
  const auto version = group->field(rows[0])._version();
  group->telemetry(rows[1]);
  group->field_slice(rows[2], 3, 1);
  group->archive_contents(rows[1]);
  CHECK(group->field(rows[0])._version() == version);
  // The counter does see a write through the same tensors (the fused operators write through
  // their outputs' pointers and bump nothing, so the control is an in-place ATen write).
  group->field(rows[0]).mul_(1.0f);
  CHECK(group->field(rows[0])._version() > version);
}

TEST_CASE("Rows are claimed, released and reused; a fresh row is a fresh brain of its key",
          "[brain][group]") {
  const auto config = small_config();
  BrainGroup group(config, 2);
  const auto a = group->claim(71);
  const auto b = group->claim(72);
  CHECK(group->size() == 2);
  group->step({a, b}, test_sensors(0, {71, 72}, 24), test_reward(0, {71, 72}));
  group->release(a);
  CHECK(group->size() == 1);
  CHECK_THROWS_WITH(group->step({a}, torch::zeros({1, 24}), torch::zeros({1})),
                    Catch::Contains("not claimed"));
  CHECK_THROWS_AS(group->cycle(a), std::out_of_range);
  // b alone is ready: one row is a range, stepped where it is (no copy into the freed front).
  const int64_t before_step = group->row_copies();
  group->step({b}, test_sensors(1, {72}, 24), test_reward(1, {72}));
  CHECK(group->row_copies() == before_step);

  const auto c = group->claim(73);  // the freed row, no growth
  CHECK(c != a);
  CHECK(group->capacity() == 2);
  CHECK(group->cycle(c) == 0);
  CHECK(group->key(c) == 73);
  auto fresh = make_brain(config, {73});
  CHECK(first_archive_difference(group->archive_contents(c), fresh->archive_contents()).empty());
  CHECK(group->cycle(b) == 2);
}

TEST_CASE("Capacity doubles when full and every robot keeps its state", "[brain][group]") {
  const auto config = small_config();
  BrainGroup group(config, 1);
  std::vector<BrainGroupImpl::Row> rows;
  std::vector<uint64_t> keys;
  std::vector<ArchiveContents> before;
  for (uint64_t key = 81; key <= 85; ++key) {
    // Step everyone there so far, remember their states, then one more joins.
    if (!rows.empty()) {
      for (int64_t i = 0; i < 2; ++i) {
        group->step(rows, test_sensors(i + 3, keys, 24), test_reward(i + 3, keys));
      }
    }
    before.clear();
    for (auto r : rows) before.push_back(group->archive_contents(r));
    rows.push_back(group->claim(key));
    keys.push_back(key);
    for (size_t i = 0; i + 1 < rows.size(); ++i) {
      INFO("robot " << keys[i] << " after " << key << " joined");
      CHECK(first_archive_difference(group->archive_contents(rows[i]), before[i]).empty());
    }
  }
  CHECK(group->capacity() == 8);  // 1 -> 2 -> 4 -> 8
}

TEST_CASE("A robot joins a group from its saved brain and continues as if never stopped",
          "[brain][group]") {
  at::set_num_threads(1);
  const auto config = small_config();
  const auto path = temp_path("group-join.pt");
  auto original = make_brain(config, {91});
  for (int64_t i = 0; i < 8; ++i) original->step(test_sensors(i, {91}, 24), test_reward(i, {91}));
  original->save(path);

  auto loaded = make_brain(config, {91});  // what the server's loader thread builds
  loaded->load(path);
  BrainGroup group(config, 1);
  const auto other = group->claim(92);
  const auto row = group->claim(*loaded);
  loaded = nullptr;
  CHECK(group->cycle(row) == 8);
  for (int64_t i = 8; i < 20; ++i) {
    const auto m =
        group->step({other, row}, test_sensors(i, {92, 91}, 24), test_reward(i, {92, 91}));
    INFO("cycle " << i);
    REQUIRE(torch::equal(m.slice(0, 1, 2),
                         original->step(test_sensors(i, {91}, 24), test_reward(i, {91}))));
  }
  // Its save from the group loads into a brain of its own, identical.
  group->save(row, path);
  auto reloaded = make_brain(config, {91});
  reloaded->load(path);
  CHECK(
      first_archive_difference(reloaded->archive_contents(), original->archive_contents()).empty());
  // And a save loads back into its row.
  original->step(test_sensors(20, {91}, 24), test_reward(20, {91}));
  original->save(path);
  group->load(row, path);
  CHECK(
      first_archive_difference(group->archive_contents(row), original->archive_contents()).empty());
  std::filesystem::remove(path);
}

TEST_CASE("A group refuses bad input, foreign brains and repeated rows with the state untouched",
          "[brain][group]") {
  const auto config = small_config();
  BrainGroup group(config, 2);
  const auto a = group->claim(101);
  const auto b = group->claim(102);
  group->step({a, b}, test_sensors(0, {101, 102}, 24), test_reward(0, {101, 102}));
  const auto before_a = group->archive_contents(a);
  auto bad = test_sensors(1, {101, 102}, 24);
  bad[1][5] = std::numeric_limits<float>::quiet_NaN();
  CHECK_THROWS_WITH(group->step({a, b}, bad, torch::zeros({2})), Catch::Contains("sensors[1][5]"));
  CHECK_THROWS_WITH(group->step({a, b}, torch::zeros({2, 25}), torch::zeros({2})),
                    Catch::Contains("sensors has shape"));
  CHECK_THROWS_WITH(group->step({a, a}, torch::zeros({2, 24}), torch::zeros({2})),
                    Catch::Contains("twice"));
  CHECK(first_archive_difference(group->archive_contents(a), before_a).empty());
  auto wide = make_brain(small_config(8, 30), {103});
  CHECK_THROWS_WITH(group->claim(*wide), Catch::Contains("config"));
  auto pair = make_brain(config, {104, 105});
  CHECK_THROWS_WITH(group->claim(*pair), Catch::Contains("one robot"));
}

namespace {
// A module that breaks the rule: a buffer without the robot on dimension 0.
struct RuleBreaker : torch::nn::Module {
  RuleBreaker() {
    register_buffer("per_robot", torch::zeros({2, 5}));
    register_buffer("shared_table", torch::zeros({3, 5}));
  }
};
struct UnknownPart : torch::nn::Module {};
struct WithUnknownPart : torch::nn::Module {
  WithUnknownPart() {
    register_buffer("per_robot", torch::zeros({2, 5}));
    register_module("mystery", std::make_shared<UnknownPart>());
  }
};
}  // namespace

TEST_CASE("A buffer without the robot on dimension 0 or an unknown module fails loudly",
          "[brain][group]") {
  RuleBreaker breaker;
  CHECK_THROWS_WITH(check_robot_rows(breaker, 2), Catch::Contains("shared_table"));
  WithUnknownPart unknown;
  CHECK_THROWS_WITH(check_robot_rows(unknown, 2), Catch::Contains("mystery"));
  // Every real brain passes (checked when it is built).
  CHECK_NOTHROW(make_brain(small_config(), {1, 2, 3}));
}

}  // namespace fieldbrain::test
