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
};

struct ConfidenceSample {
  long long cycle = 0;
  float confidence = 0;
};

struct RobotTrace {
  std::vector<CycleSample> cycles;  // reserved for the whole run: appending never allocates
  std::vector<ConfidenceSample> confidence;
};

struct SliceRecord {
  int robot = 0;
  FieldSlice slice;
};

// The arena as plain shapes: {"size":[W,H], "walls":[[x0,y0,x1,y1]..], "boxes":[[..]..],
// "circles":[[x,y,r]..], "line":{"points":[[x,y]..],"closed":b}}.
nlohmann::json arena_shapes(const Arena& arena);

// The whole file: {"arena":..., "robots":[{"index","robot_key","x":[..],"y":[..],
// "heading":[..],"motors":[[6]..],"reward":[..],"collided":[0/1..],
// "confidence":{"cycle":[..],"value":[..]}}], "slices":[{"robot","channel","z","values"}]}.
nlohmann::json run_data(const Arena& arena, const std::vector<std::string>& robot_keys,
                        const std::vector<RobotTrace>& traces,
                        const std::vector<SliceRecord>& slices);

}  // namespace fieldbrain::sim
