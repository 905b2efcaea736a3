// The answer to "is the brain doing anything?" beside every brain run: the same robots in the
// same arena, from the same start poses with the same seeds (so the same sensor noise), each
// driven for as many cycles as its brain robot ran by the random controller (six motors
// uniform in [-1, 1], seeded) instead of the server. A brain that explores no more area than
// this, or collides as often, has not learned to drive yet. Local and fast: no server.
#pragma once

#include <cstdint>
#include <vector>

#include "app/sim/arena.h"
#include "app/sim/picarx_sensors.h"
#include "app/sim/run_trace.h"

namespace fieldbrain::sim {

// The seeds a run gives robot `index` (its start pose, noise) and its random controller;
// the brain run and its baseline use the same.
uint64_t robot_seed(uint64_t run_seed, int index);
uint64_t random_controller_seed(uint64_t robot_seed);

struct BaselineRobot {
  RobotTrace trace;  // poses, motors, collisions (no confidence, no latency)
  long long cycles = 0;
  long long collisions = 0;
  double distance_m = 0.0;
  size_t cells_visited = 0;
};

// One baseline robot per entry of `cycles` (robot i runs cycles[i] cycles; at most
// `max_traced` are kept in its trace).
std::vector<BaselineRobot> run_random_baseline(const Arena& arena, uint64_t run_seed,
                                               SensorNoise noise, bool reward,
                                               const std::vector<long long>& cycles,
                                               long long max_traced);

}  // namespace fieldbrain::sim
