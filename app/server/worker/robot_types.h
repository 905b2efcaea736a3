// The values that cross the brain worker's API about one robot: what a handshake claims, what
// the attach answers, what a step returns, and a robot as the monitor sees it. Plain data, so
// sessions and the monitor include them without the worker's machinery.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/server/config/robot_policy.h"
#include "app/server/protocol/wire_handshake.h"

namespace fieldbrain::server {

class Recorder;
class FleetMembership;
struct FleetAdmission;

using RobotId = uint64_t;  // one connection's hold on a brain

struct WorkerOptions {
  std::string state_dir;               // empty = no persistence
  int64_t save_every_cycles = 0;       // 0 = no periodic save
  std::shared_ptr<Recorder> recorder;  // null = sessions are not recorded (--record)
  RobotPolicy policy;
  // How often each robot's rate/latency line is logged (robot_report_interval_s; 0 = never).
  std::chrono::steady_clock::duration robot_report_interval = std::chrono::minutes(1);
  // Fleet mode (docs/fleet.md): who may run which robot is decided with the other servers;
  // null when this server runs alone. Outlives the worker.
  FleetMembership* fleet = nullptr;
};

// What a handshake asks for: the handshake as the codec decoded it, and what the session adds.
struct BrainClaim {
  WireHandshake handshake;   // identity (robot_id or binary profile key), namespace, token, S, M
  std::string peer_address;  // the robot's IP, for keying binary robots by address
  std::string framing;       // the codec's name, for the monitor
  // Called on the worker thread when a newer connection takes this robot's brain over; the
  // session should close (its later steps and its detach are ignored).
  std::function<void()> on_taken_over;
  // Fleet mode: the fleet's answer, once it has given one (the registry asks it first).
  std::shared_ptr<const FleetAdmission> fleet_admission;
  int fleet_asks = 0;  // how often the fleet was asked for this handshake
};

struct AttachResult {
  bool ok = false;
  int code = 0;       // legacy error code when refused
  std::string error;  // why the robot was refused
  RobotId id = 0;
  std::string key;    // identity after twin suffixing ("picarx_12s_6m#2")
  int64_t cycle = 0;  // brain cycles at attach (> 0 when resumed)
  bool resumed = false;
  bool loading = false;  // binary robots: answered before the save finished loading
  std::string token;     // a newly issued token for the JSON reply ("" = none)
};

struct StepResult {
  bool ok = false;            // false: brain failed, motors are zeros
  std::vector<float> motors;  // M values, finite, in [-1, 1]
  int64_t cycle = 0;
  // Non-zero: the robot is answered with this error (a binary robot's safe stop, a JSON
  // robot's error object) instead of its motors; `error` says why (kCodeBrainStateNotFinite).
  int code = 0;
  std::string error;
};

// One robot as the monitor sees it.
struct RobotView {
  RobotId id = 0;
  std::string key;
  std::string framing;
  int sensory_dim = 0;
  int motor_dim = 0;
  int64_t cycle = 0;           // brain cycles (includes resumed ones)
  int64_t session_cycles = 0;  // cycles in this connection
  double connected_at = 0;     // epoch seconds
  double avg_cycle_ms = 0;     // time in the brain per cycle (its share of a batch call)
  std::vector<float> last_sensors;
  std::vector<float> last_motors;
  float last_reward = 0;
  double last_latency_ms = 0;  // last frame: queued for the brain -> its motors ready
  // The slow-robot watch (latency_watch.h): the robot's loop budget (0 = not watched), its
  // smoothed reply latency and whether that is over the budget.
  double loop_budget_ms = 0;
  double latency_smoothed_ms = 0;
  bool over_budget = false;
};

using AttachDone = std::function<void(AttachResult)>;

}  // namespace fieldbrain::server
