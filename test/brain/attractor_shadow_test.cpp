// The fast cycle's fp16 shadow of the attractor bank (brain/cycle_fused.h, docs/cycle.md "What
// a reward costs") is derived state: never saved, rebuilt whenever the bank was written by
// anything but the pull. These tests make a fast brain's bank change from outside (a load, an
// in-place write, a step_group's copies) while slots are pulling, and require the brain to go
// on exactly as one whose shadow was never stale: a stale shadow changes the pull's cosine
// gate, hence the field, within a cycle.
#include "test/support/catch.h"

#include <filesystem>

#include "brain/brain_group.h"
#include "brain/field_brain.h"
#include "test/brain/brain_state.h"
#include "test/brain/group_twins.h"

namespace fieldbrain::test {
namespace {

BrainConfig fast_config() {
  BrainConfig c = small_config();
  c.field_step = "fast";
  return c;
}

// A reward every 7 cycles per robot (test_reward): by cycle 12 each robot has live slots.
void run(FieldBrainImpl& brain, const std::vector<uint64_t>& keys, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i) brain.step(test_sensors(i, keys, 24), test_reward(i, keys));
}

int64_t live_slots(const FieldBrainImpl& brain) {
  return buffer(brain, "attractors.valid").sum().item<int64_t>();
}

}  // namespace

TEST_CASE("A fast brain loaded from a save pulls from its rebuilt attractor shadow exactly as "
          "the brain that never saved",
          "[brain][attractors]") {
  at::set_num_threads(1);
  const std::vector<uint64_t> keys{31, 32};
  const auto path = temp_path("shadow_resume.pt");
  auto original = make_brain(fast_config(), keys);
  run(*original, keys, 0, 12);
  REQUIRE(live_slots(*original) > 0);
  original->save(path);
  auto resumed = make_brain(fast_config(), keys);
  run(*resumed, {keys[1], keys[0]}, 0, 5);  // other slots and shadow contents before the load
  resumed->load(path);
  for (int64_t i = 12; i < 24; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    INFO("cycle " << i);
    REQUIRE(torch::equal(original->step(s, r), resumed->step(s, r)));
    REQUIRE(torch::equal(original->field(), resumed->field()));
  }
  std::filesystem::remove(path);
}

TEST_CASE("A fast brain whose attractor bank is written from outside pulls from the new bank",
          "[brain][attractors]") {
  at::set_num_threads(1);
  const std::vector<uint64_t> keys{41};
  const auto path = temp_path("shadow_bank.pt");
  auto written = make_brain(fast_config(), keys);
  run(*written, keys, 0, 12);
  REQUIRE(live_slots(*written) > 0);
  // An in-place write of the bank (the buffer the pull reads), then a fresh brain loaded from
  // a save of it: a new cycle builds its shadow from the bank it starts with.
  buffer(*written, "attractors.bank").mul_(-0.5);
  written->save(path);
  auto fresh = make_brain(fast_config(), keys);
  fresh->load(path);
  for (int64_t i = 12; i < 20; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    INFO("cycle " << i);
    REQUIRE(torch::equal(written->step(s, r), fresh->step(s, r)));
    REQUIRE(torch::equal(written->field(), fresh->field()));
  }
  std::filesystem::remove(path);
}

TEST_CASE("step_group of fast brains with pulling attractors gives exactly what stepping each "
          "alone gives",
          "[brain][attractors]") {
  at::set_num_threads(1);
  const std::vector<uint64_t> keys{21, 22, 23};
  std::vector<FieldBrain> grouped, separate;
  for (auto k : keys) {
    grouped.emplace_back(fast_config(), std::vector<uint64_t>{k});
    separate.emplace_back(fast_config(), std::vector<uint64_t>{k});
  }
  std::vector<FieldBrainImpl*> ptrs;
  for (auto& g : grouped) ptrs.push_back(g.get());
  for (int64_t i = 0; i < 24; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    // The group's order changes at cycle 12: each robot's state lands in another row.
    const bool swapped = i >= 12;
    std::vector<FieldBrainImpl*> order = ptrs;
    if (swapped) std::swap(order[0], order[2]);
    const auto so = swapped ? torch::stack({s[2], s[1], s[0]}) : s;
    const auto ro = swapped ? torch::stack({r[2], r[1], r[0]}) : r;
    const auto mg = FieldBrainImpl::step_group(order, so, ro);
    for (int64_t b = 0; b < 3; ++b) {
      const int64_t row = swapped ? 2 - b : b;
      const auto ms = separate[b]->step(s.slice(0, b, b + 1), r.slice(0, b, b + 1));
      INFO("cycle " << i << " robot " << b);
      REQUIRE(torch::equal(mg.slice(0, row, row + 1), ms));
    }
  }
  for (size_t b = 0; b < keys.size(); ++b) CHECK(torch::equal(grouped[b]->field(), separate[b]->field()));
}

TEST_CASE("In a brain group, a robot whose save is loaded while others cycle pulls from the "
          "loaded bank, whatever the group steps or reads first",
          "[brain][attractors][group]") {
  // The shadow is fresh or stale per row (brain/cycle_fused.h): a view of other rows writes
  // nothing, an outside write to one row leaves every row suspect. Here robot 72's row is
  // loaded, then robot 71 alone is stepped first (a cycle that views only row 0) and robot
  // 73 read, before 72 cycles with 71 in one view: a shadow refreshed only for the rows in the
  // view of the first cycle after the write would leave 72's stale and change its pull.
  at::set_num_threads(1);
  const auto config = fast_config();
  const int64_t S = config.sensory_dim;
  BrainGroup group(config, 4);
  Twin a = join_twin(*group, config, 71), b = join_twin(*group, config, 72),
       c = join_twin(*group, config, 73);
  const auto path = temp_path("shadow_group_load.pt");
  // Robot 72 stores at cycles 1, 8, 15, 22 and 29 (test_reward) into 4 slots: by cycle 32 its
  // slot 0 holds cycle 29's field, in its save after 10 cycles cycle 1's.
  for (int64_t i = 0; i < 32; ++i) {
    tick(*group, {&a, &b, &c}, S);
    if (i == 9) b.alone->save(path);
  }
  REQUIRE(live_slots(*b.alone) == 4);
  // 72 goes back to its save, in the group and alone.
  group->load(b.row, path);
  b.alone->load(path);
  b.cycles = b.alone->cycle();
  tick(*group, {&a}, S);  // a cycle whose view holds row 0 only
  group->telemetry(c.row);  // a read-out that views row 2
  for (int64_t i = 0; i < 8; ++i) tick(*group, {&a, &b}, S);  // 72 cycles, in the view [0, 2)
  for (int64_t i = 0; i < 4; ++i) tick(*group, {&a, &b, &c}, S);
  for (Twin* t : {&a, &b, &c}) {
    INFO("robot " << t->key);
    CHECK(torch::equal(group->field(t->row), t->alone->field()[0]));
  }
  std::filesystem::remove(path);
}

}  // namespace fieldbrain::test
