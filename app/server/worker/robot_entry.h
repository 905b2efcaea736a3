// One robot's brain as the registry holds it (robot_registry.h), and a load's result coming
// back from the loader thread. Worker thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/server/stats/robot_rate_log.h"
#include "app/server/worker/brain_engine.h"
#include "app/server/worker/latency_watch.h"
#include "app/server/worker/recorder.h"
#include "app/server/worker/robot_types.h"

namespace fieldbrain::server {

// One brain in memory. Its owner (view.id) is the connection that uses it; 0 when none.
struct RobotEntry {
  uint64_t entry_number = 0;  // the registry's key
  RobotView view;
  std::string base;          // identity without twin suffix ("bin:picarx_12s_6m")
  std::string peer_address;  // of the connection it was made or last taken over for
  std::string identity;      // with it
  std::string file;          // save file name in the state dir ("" = no persistence)
  std::string load_path;
  bool legacy_file = false;  // loading a save named by an older release
  bool json = false;
  std::optional<BrainEngine::Slot> slot;  // empty while loading
  std::vector<AttachDone> waiting;        // JSON handshakes answered once loaded
  std::function<void()> on_taken_over;
  std::chrono::steady_clock::time_point last_active;
  bool in_flight = false;  // a step of it is in the worker
  std::chrono::steady_clock::time_point last_snapshot{};
  int saving = 0;  // snapshots the writer has not finished (one at a time per robot)
  double brain_ms_total = 0;
  std::shared_ptr<SessionRecording> recording;
  LatencyWatch latency{0, ""};  // set at attach from the policy's loop budget
  RobotRateLog rate_log;        // the periodic rate/latency line (robot_report_interval_s)
};

// A brain the loader thread built (or failed to build) from a robot's save.
struct LoadedBrain {
  uint64_t entry = 0;
  std::unique_ptr<BrainEngine::Detached> brain;
  std::string error;
  bool missing = false;  // no save after all (the write it waited for failed)
  // The save is intact but made for another configuration (brain/save_mismatch.h): the robot
  // is refused and the file kept as it is, so going back to that configuration resumes it.
  bool other_config = false;
};

}  // namespace fieldbrain::server
