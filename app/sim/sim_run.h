// A run of the simulator: N robots in one arena, each with its own controller (for the brain,
// its own connection to the server), K cycles each, a progress line on the terminal, and the
// outputs in the run's directory:
//   summary.json        per robot: cycles, replies, collisions, distance, errors, ...
//   run_data.json       what the pictures are drawn from (app/sim/run_trace.h): the arena,
//                       each robot's path, motors, reward, collisions and (brain runs) the
//                       brain's confidence per cycle, and field slices (content channel 0 and
//                       the motor-echo channels 62/63, middle z) fetched through the monitor's
//                       field_slice; slices are skipped, and the summary says so, when the
//                       monitor is unreachable.
//   tokens.json         the tokens the server issued to the JSON robots (robot_tokens.h),
//                       reused by the next run so that it claims the same robot ids.
// A brain run is paced like a robot with --hz (reply latency and missed deadlines in the
// summary), reconnects with back-off when its connection is lost (brain_connection.h: a gap
// in the run, not its end), and is followed by a random controller's run in the same arena
// with the same seeds (baseline_run.h) for the pictures' comparison.
// scripts/plot_run.py draws the pictures from run_data.json with matplotlib. A run ended early
// (SimOptions::stop_signal) writes both files for the cycles done and says so in the summary.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/sim/controllers.h"
#include "app/sim/picarx_sensors.h"
#include "app/sim/robot_link.h"

namespace fieldbrain::sim {

struct SimOptions {
  std::string arena_path;  // empty: the default map
  std::string server;      // HOST:PORT, brain controller only
  std::string monitor;     // HOST:PORT; empty = no slices
  int robots = 1;
  long long cycles = 1000;
  std::string out_dir = "sim-out";
  Framing framing = Framing::B;
  bool reward = false;
  uint64_t seed = 1;
  ControllerKind controller = ControllerKind::Brain;
  std::vector<int> slice_channels = {0, 62, 63};
  double timeout_s = 30.0;  // per reply
  SensorNoise noise{0.01, 0.005};
  bool progress = true;                 // progress line on stderr
  // JSON robot ids: "" = sim-<i>; else this id for a single robot, <id>-<i> for several.
  std::string robot_id;
  std::string token;        // --token: the single JSON robot's token
  std::string tokens_file;  // "" = <out_dir>/tokens.json
  double hz = 0.0;          // cycles per second per robot, paced like a robot; 0 = unpaced
  ReconnectPolicy reconnect;
  bool baseline = true;        // a brain run is followed by its random controller's run
  std::string server_config;   // the server's config as the pictures state it ("" = unknown)
  // Set to a signal number (main's SIGINT/SIGTERM handler) to end the run early: each robot
  // stops after its current cycle and the outputs are written for the cycles done.
  const std::atomic<int>* stop_signal = nullptr;
};

struct RobotReport {
  int index = 0;
  std::string robot_key;  // the server's key for this robot ("" when not connected/known)
  long long cycles = 0;
  long long replies = 0;
  long long collisions = 0;
  double distance_m = 0.0;
  size_t cells_visited = 0;
  double mean_abs_motor = 0.0;
  std::vector<std::string> errors;
  std::string key_note;      // why robot_key is "" (empty when it is known)
  long long start_cycle = -1;  // JSON robots: the brain's cycle at the first handshake
  long long reconnects = 0;    // connections remade after a lost one
  long long missed_deadlines = 0;  // paced runs: cycles whose reply came after their period
};

struct SimReport {
  std::vector<RobotReport> robots;
  double seconds = 0.0;
  bool monitor_reachable = false;
  std::string monitor_message;
  std::vector<std::string> slices;  // "r<i> c<ch> z<z>" for every slice in run_data.json
  std::string run_data_file;        // "run_data.json"
  int interrupted_by = 0;           // the signal that ended the run early, 0 when none
  nlohmann::json summary;  // what summary.json holds
  bool ok() const;         // every robot ran all cycles without an error
};

// The JSON robot id of robot `index` (SimOptions::robot_id).
std::string json_robot_id(const SimOptions& options, int index);

// Runs the simulation and writes the outputs. Throws std::exception only for problems that
// stop the run as a whole (bad map, bad options, output directory not writable); a robot's
// connection failure is recorded in its report instead.
SimReport run_sim(const SimOptions& options);

}  // namespace fieldbrain::sim
