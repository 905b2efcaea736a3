// `fieldbrain replay`: runs a recorded session (app/fieldbrain/recording.h) through a fresh
// brain with the robot's key, seed and brain config, and compares the motors cycle by cycle
// with those the server sent and, optionally, with the Python reference's on the same inputs.
// A session of the legacy profile replays through a LegacyBrain with the robot's seed, input
// list and the fixed clock (brain/legacy/legacy_profile.h); the Python reference does not apply.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "app/fieldbrain/recording.h"

namespace fieldbrain {

struct ReplayOptions {
  std::string field_step;  // empty: the recorded config's; else reference | fast | script | path.pt
  std::string device;      // empty: the recorded config's; else cpu | cuda
  bool python = false;     // also run scripts/reference/fieldbrain_ref.py replay
  double tolerance = -1;   // < 0: 1e-5 on the reference step, 1e-4 otherwise (docs/replay.md)
};

struct CycleDiff {
  int64_t cycle = 0;
  double vs_recording = 0;  // max |motor diff|, this replay vs the recording
  double vs_python = -1;    // this replay vs the Python reference (-1 without --python)
};

struct Worst {
  double diff = 0;
  int64_t cycle = -1;
  void take(double d, int64_t c) {
    if (c >= 0 && (cycle < 0 || d > diff)) diff = d, cycle = c;
  }
};

struct ReplayReport {
  int64_t cycles = 0;
  std::string field_step, device;
  Worst vs_recording, vs_python, python_vs_recording;
  bool python_ran = false;
  double tolerance = 0;
  bool ok() const;  // every compared diff <= tolerance
};

// Throws std::runtime_error when the recording cannot be replayed (it started from a resumed
// brain, dropped cycles, or the Python reference failed).
ReplayReport replay_recording(const Recording& recording, const ReplayOptions& options,
                              const std::function<void(const CycleDiff&)>& on_cycle = {});

}  // namespace fieldbrain
