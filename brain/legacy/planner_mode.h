// The legacy profile's strategic planner modes (P4 of the pins; docs/legacy.md "Planner"): one
// enum and one table of names for the config (brain/legacy/legacy_config.h, key
// "legacy_planner") and the brain (LegacyOptions::planner), so the two cannot drift apart.
#pragma once

#include "brain/config_reader.h"

namespace fieldbrain {

// Off: the original's discovery requests are counted and dropped (closest to em-brain's server
// on a CPU, where a discovery never returns within hundreds of cycles).
// Sync: each requested discovery runs on the cycle's thread before the field evolves, drawing
// from the robot's generator in the original's order: reproducible, what
// scripts/legacy/run_original.py --planner sync pins.
// Async: discoveries run on a worker thread per brain, as the original's executor runs them,
// and their patterns arrive when they are done: not reproducible, as the original is not.
enum class LegacyPlanner { Off, Sync, Async };

// The config's names (config::read_choice lists them in errors).
inline constexpr config::Choice<LegacyPlanner> kLegacyPlannerNames[] = {
    {"off", LegacyPlanner::Off}, {"sync", LegacyPlanner::Sync}, {"async", LegacyPlanner::Async}};

// The config's name ("off", "sync", "async"), for telemetry and saves.
inline const char* planner_mode_name(LegacyPlanner p) {
  return config::choice_name(p, kLegacyPlannerNames);
}

}  // namespace fieldbrain
