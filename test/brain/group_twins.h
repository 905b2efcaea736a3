// Test helpers for BrainGroup: each robot in a group beside its twin, a single-robot brain of
// the same key stepped alone on the same inputs, which the group must match bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "brain/brain_group.h"
#include "brain/field_brain.h"

namespace fieldbrain::test {

// A robot in the group with its twin stepped alone on the same inputs.
struct Twin {
  uint64_t key;
  BrainGroupImpl::Row row;
  FieldBrain alone;
  int64_t cycles = 0;
};

// Claims a row for `key` in `group` and makes its twin.
Twin join_twin(BrainGroupImpl& group, const BrainConfig& config, uint64_t key);
// One tick of the group over `ready` (in that order, inputs test_sensors/test_reward at each
// robot's own cycle), each twin stepped alone too; the motors must agree exactly.
void tick(BrainGroupImpl& group, const std::vector<Twin*>& ready, int64_t S);
// The robot's cycle, archive, telemetry and a field slice equal its twin's.
void check_same_state(BrainGroupImpl& group, Twin& t);

}  // namespace fieldbrain::test
