// The brain worker: one thread that owns every robot's brain, so brain work never runs on the
// Asio I/O thread and a slow robot never stalls another's reads and writes.
//
// Sessions post jobs (attach, step, detach, queries); the worker drains its queue in ticks.
// Within a tick, steps of robots that share (S, M) are collected into one
// BrainEngine::step_group call (one brain call per group per tick; no fixed-rate sleep: a
// tick takes whatever is ready). Any other job first flushes the collected steps, so jobs of
// one robot keep their order (a detach after a step, an attach after a detach of the same key).
// Completion callbacks run on the worker thread; callers post them to their own executor.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "app/server/brain_engine.h"
#include "app/server/recorder.h"
#include "app/server/server_stats.h"

namespace fieldbrain::server {

using RobotId = uint64_t;

struct WorkerOptions {
  std::string state_dir;          // empty = no persistence
  int64_t save_every_cycles = 0;  // 0 = no periodic save
  std::shared_ptr<Recorder> recorder;  // null = sessions are not recorded (--record)
};

struct AttachResult {
  bool ok = false;
  std::string error;  // why the brain could not be made
  RobotId id = 0;
  std::string key;    // identity after twin suffixing ("picarx_12s_6m#2")
  int64_t cycle = 0;  // brain cycles at attach (> 0 when resumed)
  bool resumed = false;
};

struct StepResult {
  bool ok = false;            // false: brain failed, motors are zeros
  std::vector<float> motors;  // M values, finite, in [-1, 1]
  int64_t cycle = 0;
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
};

class BrainWorker {
 public:
  using AttachDone = std::function<void(AttachResult)>;
  using StepDone = std::function<void(StepResult)>;
  using Query = std::function<void(BrainWorker&)>;
  // Called on the worker thread for each cycle whose number is a multiple of a subscribed
  // period: (cycle, the telemetry line as compact JSON).
  using Publish = std::function<void(int64_t cycle, std::string line)>;

  BrainWorker(BrainEngine& engine, WorkerOptions options, ServerStats& stats);
  ~BrainWorker();  // stop()s

  void start();
  // Finishes the queued jobs, saves every attached robot, joins. Idempotent.
  void stop();

  // Returns false (and never calls `done`) once stop() has begun.
  bool attach(std::string base_key, std::string framing, int sensory_dim, int motor_dim,
              AttachDone done);
  bool step(RobotId id, std::vector<float> sensors, float reward, StepDone done);
  bool detach(RobotId id);
  bool query(Query fn);

  // Subscriptions: telemetry is computed only for cycles some subscriber wants.
  void set_publisher(Publish publish);
  void add_period(int64_t every_n);
  void remove_period(int64_t every_n);

  // Worker-thread-only accessors, for queries.
  BrainEngine& engine() { return engine_; }
  std::vector<RobotView> robots() const;
  const RobotView* robot_by_key(const std::string& key) const;
  BrainEngine::Slot slot_of(RobotId id) const;
  // Saves every robot now; returns {"saved":[keys],"failed":{key:reason}}.
  nlohmann::json save_all();

  // Counters (any thread): brain calls vs. robot-cycles stepped shows the batching.
  uint64_t brain_calls() const { return brain_calls_.load(); }
  uint64_t frames_stepped() const { return frames_stepped_.load(); }
  uint64_t saves() const { return saves_.load(); }
  double brain_seconds() const;

 private:
  struct AttachJob {
    std::string base_key, framing;
    int sensory_dim, motor_dim;
    AttachDone done;
  };
  struct StepJob {
    RobotId id;
    std::vector<float> sensors;
    float reward;
    StepDone done;
    std::chrono::steady_clock::time_point queued_at;
  };
  struct DetachJob {
    RobotId id;
  };
  struct QueryJob {
    Query fn;
  };
  using Job = std::variant<AttachJob, StepJob, DetachJob, QueryJob>;

  struct Robot {
    RobotView view;
    BrainEngine::Slot slot = 0;
    std::string state_path;
    double brain_ms_total = 0;
    std::shared_ptr<SessionRecording> recording;
  };

  bool push(Job job);
  void run();
  void flush(std::vector<StepJob>& pending);
  void run_group(std::vector<StepJob>& group);
  void do_attach(AttachJob& job);
  void do_detach(RobotId id);
  bool save_robot(Robot& robot);
  void publish_if_wanted(Robot& robot);

  BrainEngine& engine_;
  WorkerOptions options_;
  ServerStats& stats_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool started_ = false;
  std::thread thread_;

  // Worker-thread state.
  std::map<RobotId, Robot> robots_;
  std::set<std::string> active_keys_;
  RobotId next_id_ = 1;

  std::mutex publish_mutex_;
  Publish publish_;
  std::multiset<int64_t> periods_;

  std::atomic<uint64_t> brain_calls_{0};
  std::atomic<uint64_t> frames_stepped_{0};
  std::atomic<uint64_t> saves_{0};
  std::atomic<uint64_t> brain_us_{0};
};

}  // namespace fieldbrain::server
