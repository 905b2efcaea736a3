// The BrainEngine of the legacy profile ("profile": "legacy", docs/legacy.md): one
// fieldbrain::legacy::LegacyBrain per robot (em-brain's original field brain number for number,
// brain/legacy/LEGACY.md), stepped one robot after the other on the CPU. The header is
// torch-free like torch_brain_engine.h; make_field_brain_engine picks this engine when the
// config says so (the one place a profile is chosen).
//
// Per robot (brain/legacy/legacy_profile.h): the options legacy_options(config, seed) with the
// seed legacy_robot_seed(config seed, robot key hash), the input list
// legacy_input_list(sensors, reward, "legacy_reward"), the clock
// legacy_clock_seconds("legacy_clock", the brain's cycle). Saves are the brain's own archives
// (meta "profile": "legacy") named <key>.legacy.pt, so a state directory shared with the
// fieldbrain profile keeps both kinds side by side; a save of another profile is refused with a
// message naming it. Telemetry is the original's brain state plus the profile, the clock mode,
// the robot's seed and the cycle's host time.
#pragma once

#include <memory>

#include "app/server/worker/brain_engine.h"
#include "brain/brain_config.h"

namespace fieldbrain::server {

// `config` must have profile Legacy; throws std::invalid_argument when it does not validate.
std::unique_ptr<BrainEngine> make_legacy_brain_engine(const BrainConfig& config);

}  // namespace fieldbrain::server
