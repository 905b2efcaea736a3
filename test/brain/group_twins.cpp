#include "test/brain/group_twins.h"

#include "test/brain/brain_state.h"
#include "test/support/catch.h"

namespace fieldbrain::test {

Twin join_twin(BrainGroupImpl& group, const BrainConfig& config, uint64_t key) {
  return Twin{key, group.claim(key), make_brain(config, {key})};
}

void tick(BrainGroupImpl& group, const std::vector<Twin*>& ready, int64_t S) {
  std::vector<BrainGroupImpl::Row> rows;
  auto sensors = torch::empty({static_cast<int64_t>(ready.size()), S});
  auto reward = torch::empty({static_cast<int64_t>(ready.size())});
  for (size_t i = 0; i < ready.size(); ++i) {
    rows.push_back(ready[i]->row);
    sensors[i].copy_(test_sensors(ready[i]->cycles, {ready[i]->key}, S)[0]);
    reward[i].copy_(test_reward(ready[i]->cycles, {ready[i]->key})[0]);
  }
  const auto motors = group.step(rows, sensors, reward);
  for (size_t i = 0; i < ready.size(); ++i) {
    Twin& t = *ready[i];
    const auto alone = t.alone->step(sensors.slice(0, i, i + 1), reward.slice(0, i, i + 1));
    INFO("robot " << t.key << " cycle " << t.cycles);
    REQUIRE(torch::equal(motors.slice(0, i, i + 1), alone));
    ++t.cycles;
  }
}

void check_same_state(BrainGroupImpl& group, Twin& t) {
  INFO("robot " << t.key);
  CHECK(group.cycle(t.row) == t.alone->cycle());
  CHECK(
      first_archive_difference(group.archive_contents(t.row), t.alone->archive_contents()).empty());
  auto in_group = group.telemetry(t.row), alone = t.alone->telemetry(0);
  in_group.erase("cycle_time_ms");  // wall time of the last (group) cycle
  alone.erase("cycle_time_ms");
  CHECK(in_group == alone);
  CHECK(torch::equal(group.field_slice(t.row, 5, 3), t.alone->field_slice(0, 5, 3)));
}

}  // namespace fieldbrain::test
