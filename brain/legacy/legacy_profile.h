// The legacy profile's one entry header ("profile": "legacy", docs/legacy.md): the brain
// (legacy_brain.h) and what the profile decides around the original's cycle, written once for
// everything outside brain/legacy/ that feeds a LegacyBrain (the server's engine, the replay,
// the compare-original command, the bench, the Python Brain): the brain's options from the
// brain config, the per-robot seed, the clock of a cycle, the input list made from a robot's
// sensors and reward; and the brain's read-only views for tools (legacy_views.h). Code outside
// brain/legacy/ includes this header and no other from here (brain/brain_config.h excepted: it
// holds the torch-free LegacyConfig, legacy_config.h).
#pragma once

#include <cstdint>
#include <vector>

#include "brain/brain_config.h"
#include "brain/legacy/legacy_brain.h"
#include "brain/legacy/legacy_config.h"
#include "brain/legacy/legacy_views.h"

namespace fieldbrain {

// The seed of one robot's legacy brain (torch.manual_seed / np.random.seed / random.seed of the
// original): robot_seed(config seed, robot key hash) as the fieldbrain profile derives each
// robot's Philox seed (brain/robot_seed.h), kept to its low 32 bits because np.random.seed takes
// only [0, 2^32). Telemetry reports it ("seed"), so `run_original.py --seed` reproduces a
// served robot.
uint32_t legacy_robot_seed(uint64_t config_seed, uint64_t robot_key_hash);

// The options of a legacy brain under `config` (its sensory_dim, motor_dim, resolution and
// legacy_planner) seeded `seed`: the one mapping from the brain config to the brain's options.
legacy::LegacyOptions legacy_options(const BrainConfig& config, uint64_t seed);

// The now_s of cycle `cycle` (0-based, continuing across save and resume): Fixed gives
// kLegacyClockStartS + cycle * kLegacyClockStepS, the pinned original's fake clock; Wall the
// system clock in seconds since the epoch (time.time()).
double legacy_clock_seconds(LegacyClock clock, int64_t cycle);

// The largest magnitude of a value in the original's input list: its validate_list_input
// refuses anything outside [-10, 10] (LegacyBrain::step refuses it the same way), so the server
// refuses such a frame before it reaches the brain (docs/operating.md "Limits").
constexpr float kLegacyInputBound = 10.0f;

// The original's input list for one cycle: the S sensors, then the reward when `reward` is
// Append (so the list is longer than S and the original reads it), nothing more when Drop.
std::vector<double> legacy_input_list(const float* sensors, int64_t sensory_dim, float reward,
                                      LegacyReward rule);

}  // namespace fieldbrain
