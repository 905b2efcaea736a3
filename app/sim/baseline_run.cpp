#include "app/sim/baseline_run.h"

#include <algorithm>
#include <optional>

#include "app/sim/controllers.h"
#include "app/sim/sim_robot.h"

namespace fieldbrain::sim {

uint64_t robot_seed(uint64_t run_seed, int index) { return run_seed * 7919u + uint64_t(index); }

uint64_t random_controller_seed(uint64_t robot_seed) { return robot_seed ^ 0x5eedu; }

std::vector<BaselineRobot> run_random_baseline(const Arena& arena, uint64_t run_seed,
                                               SensorNoise noise, bool reward,
                                               const std::vector<long long>& cycles,
                                               long long max_traced) {
  const PicarxGeometry geometry;
  std::vector<BaselineRobot> out(cycles.size());
  for (size_t i = 0; i < cycles.size(); ++i) {
    const int index = static_cast<int>(i);
    const uint64_t seed = robot_seed(run_seed, index);
    SimRobot robot(arena, geometry, start_pose(arena, geometry, index, run_seed), seed, noise);
    RandomController controller(random_controller_seed(seed));
    BaselineRobot& b = out[i];
    b.trace.cycles.reserve(size_t(std::min(cycles[i], max_traced)));
    for (long long c = 0; c < cycles[i]; ++c) {
      std::optional<float> r;
      if (reward) r = progress_reward(robot.last(), robot.geometry());
      const std::vector<float> motors = controller.decide(robot.sense(), r);
      const StepOutcome step = robot.act(motors);
      if (c < max_traced) {
        CycleSample s;
        s.x = float(robot.car().pose.position.x);
        s.y = float(robot.car().pose.position.y);
        s.heading = float(robot.car().pose.heading);
        std::copy(motors.begin(), motors.begin() + 6, s.motors.begin());
        s.reward = r.value_or(0.0f);
        s.collided = step.collided;
        b.trace.cycles.push_back(s);
      }
    }
    b.cycles = cycles[i];
    b.collisions = robot.collisions();
    b.distance_m = robot.distance();
    b.cells_visited = robot.cells_visited();
  }
  return out;
}

}  // namespace fieldbrain::sim
