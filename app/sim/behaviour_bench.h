// The behaviour benchmark (a benchmark, not a test): the same map, seed and cycle count for
// the brain (when a server is given), a random-motor controller and a constant-forward
// controller. Reports collisions per 1,000 cycles, distance covered and area explored (grid
// cells of kExploreCell visited), prints a table and writes <out>/behaviour.json; each
// controller's own run (summary.json, run_data.json) goes to <out>/<controller>/.
#pragma once

#include <nlohmann/json.hpp>

#include "app/sim/sim_run.h"

namespace fieldbrain::sim {

// `base` supplies server, framing, reward, robots, cycles, seed, arena and out_dir; its
// controller is ignored. Returns what behaviour.json holds.
nlohmann::json run_behaviour_bench(const SimOptions& base);

}  // namespace fieldbrain::sim
