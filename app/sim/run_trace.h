// What a run leaves for its pictures: per robot and cycle the pose, the six motors, the reward
// sent and whether the car hit something; the brain's prediction confidence sampled through
// the monitor; the field slices fetched at the end; the arena's geometry. Written as
// run_data.json, which scripts/plot_run.py turns into pictures (matplotlib).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/sim/arena.h"
#include "app/sim/monitor_client.h"

namespace fieldbrain::sim {

struct CycleSample {
  float x = 0, y = 0, heading = 0;  // pose after the cycle (m, m, rad)
  std::array<float, 6> motors{};    // as applied (padded/truncated to the client's six)
  float reward = 0;                 // the reward sent with this cycle's sensors (0 if none)
  bool collided = false;
  float latency_ms = 0;  // the server's reply, from sending the sensors (0: a local controller)
  float t = 0;           // wall seconds since the run started, at the cycle's end
};

// A lost connection and its reconnection (brain_connection.h): the run's gap.
struct LinkGap {
  long long cycle = 0;       // the cycle whose exchange failed (run again once reconnected)
  double at_s = 0;           // wall seconds since the run started
  double seconds = 0;        // until the new handshake's reply
  int attempts = 0;          // handshakes tried
  bool resumed = false;      // false: reconnection gave up (the robot ended there)
  long long brain_cycle = -1;  // JSON robots: the cycle the handshake reply reported
  std::string cause;         // why the exchange failed
};

struct ConfidenceSample {
  long long cycle = 0;
  float confidence = 0;
};

struct RobotTrace {
  std::vector<CycleSample> cycles;  // reserved for the whole run: appending never allocates
  std::vector<ConfidenceSample> confidence;
  std::vector<LinkGap> gaps;
};

struct SliceRecord {
  int robot = 0;
  FieldSlice slice;
};

// The arena as plain shapes: {"size":[W,H], "walls":[[x0,y0,x1,y1]..], "boxes":[[..]..],
// "circles":[[x,y,r]..], "line":{"points":[[x,y]..],"closed":b}}.
nlohmann::json arena_shapes(const Arena& arena);

// One robot's trace: {"x":[..],"y":[..],"heading":[..],"motors":[[6]..],"reward":[..],
// "collided":[0/1..],"latency_ms":[..],"t":[..],"confidence":{"cycle":[..],"value":[..]},
// "gaps":[{"cycle","at_s","seconds","attempts","resumed","brain_cycle","cause"}..]}.
nlohmann::json trace_json(const RobotTrace& trace);

// The whole file: {"arena":..., "robots":[{"index","robot_key", + trace_json}],
// "slices":[{"robot","channel","z","values"}]}; sim_run adds "run" (what ran: controller,
// server brain, config, pacing) and, for brain runs, "baseline" (baseline_run.h).
nlohmann::json run_data(const Arena& arena, const std::vector<std::string>& robot_keys,
                        const std::vector<RobotTrace>& traces,
                        const std::vector<SliceRecord>& slices);

}  // namespace fieldbrain::sim
