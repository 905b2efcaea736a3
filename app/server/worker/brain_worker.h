// The brain worker: one thread that owns every robot's brain, so brain work never runs on the
// Asio I/O thread and a slow robot never stalls another's reads and writes.
//
// Sessions post jobs (attach, step, detach, queries); the worker drains its queue in ticks.
// Within a tick, steps of robots that share (S, M) are collected into one
// BrainEngine::step_group call (one brain call per group per tick; no fixed-rate sleep: a
// tick takes whatever is ready). Any other job first flushes the collected steps, so jobs of
// one robot keep their order (a detach after a step, an attach after a detach of the same key).
// Completion callbacks run on the worker thread; callers post them to their own executor.
//
// Disks never hold up a tick: a save is a host copy of the robot's state taken on this
// thread (BrainEngine::snapshot), which the state writer thread (state_writer.h) digests,
// serialises and fsyncs while every robot, the one being saved included, keeps cycling; a
// robot's saved brain is loaded on a loader thread. Identity (identity_store.h), takeover of a silent connection and the live-brain
// quota are decided here, on the worker thread, so they need no locks.
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
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "app/server/worker/brain_engine.h"
#include "app/server/worker/identity_store.h"
#include "app/server/worker/job_thread.h"
#include "app/server/worker/latency_watch.h"
#include "app/server/worker/recorder.h"
#include "app/server/protocol/robot_policy.h"
#include "app/server/stats/server_stats.h"
#include "app/server/worker/state_writer.h"

namespace fieldbrain::server {

using RobotId = uint64_t;

struct WorkerOptions {
  std::string state_dir;               // empty = no persistence
  int64_t save_every_cycles = 0;       // 0 = no periodic save
  std::shared_ptr<Recorder> recorder;  // null = sessions are not recorded (--record)
  RobotPolicy policy;
};

// What a handshake asks for.
struct BrainClaim {
  bool json = false;         // JSON-lines robot (own namespace, tokens)
  std::string key;           // robot_id, or the binary profile key ("picarx_12s_6m")
  std::string peer_address;  // the robot's IP, for keying binary robots by address
  std::string framing;
  int sensory_dim = 0;
  int motor_dim = 0;
  std::string token;  // JSON "token" field, "" when absent
  // Called on the worker thread when a newer connection takes this robot's brain over; the
  // session should close (its later steps and its detach are ignored).
  std::function<void()> on_taken_over;
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

  // Removes stale "*.tmp-*" files of the state dir and reads its identity file; throws
  // std::runtime_error when that file is unreadable.
  void start();
  // Finishes the queued jobs, saves every attached robot, waits for the writer. Idempotent.
  void stop();
  // After stop(): robots whose final save failed (their latest state is lost).
  std::vector<std::string> unsaved() const { return writer_.unsaved(); }
  // Identity-file writes that failed (each refused a handshake); main() exits 3 like for a
  // failed final save, so an operator learns the state disk needs attention.
  uint64_t identity_write_failures() const { return identity_write_failures_.load(); }

  // Returns false (and never calls `done`) once stop() has begun.
  bool attach(BrainClaim request, AttachDone done);
  bool step(RobotId id, std::vector<float> sensors, float reward, StepDone done);
  bool detach(RobotId id);
  bool query(Query fn);

  // Subscriptions: telemetry is computed only for cycles some subscriber wants.
  void set_publisher(Publish publish);
  void add_period(int64_t every_n);
  void remove_period(int64_t every_n);

  // Worker-thread-only accessors, for queries. robots() lists connected robots whose brain is
  // ready (not the ones still loading).
  BrainEngine& engine() { return engine_; }
  std::vector<RobotView> robots() const;
  const RobotView* robot_by_key(const std::string& key) const;
  BrainEngine::Slot slot_of(RobotId id) const;
  // Brains held in memory, loading ones included (what max_live_brains bounds).
  size_t live_brains() const { return brains_.size(); }
  // Queues a save of every robot (the monitor's `save`): {"saved":[keys queued for the
  // writer], "skipped":{key: why}, "failed":{key: reason}}. A robot whose last save is still
  // being written, or was taken less than 10 s ago, is skipped (a save storm costs the ticks
  // at most one snapshot per robot per 10 s).
  nlohmann::json save_all();

  // Counters (any thread): brain calls vs. robot-cycles stepped shows the batching.
  uint64_t brain_calls() const { return brain_calls_.load(); }
  uint64_t frames_stepped() const { return frames_stepped_.load(); }
  uint64_t saves() const { return writer_.writes(); }  // saves written to disk
  double brain_seconds() const;

 private:
  struct AttachJob {
    BrainClaim request;
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
  struct LoadedJob {  // the loader finished (or failed) building a robot's brain
    uint64_t entry;
    std::unique_ptr<BrainEngine::Detached> brain;
    std::string error;
    bool missing = false;  // no save after all (the write it waited for failed)
  };
  struct SavedJob {  // the writer ran (or dropped) a snapshot of this entry's brain
    uint64_t entry;
  };
  using Job = std::variant<AttachJob, StepJob, DetachJob, QueryJob, LoadedJob, SavedJob>;

  // One brain in memory. Its owner (view.id) is the connection that uses it; 0 when none.
  struct Robot {
    uint64_t entry_number = 0;  // key of brains_
    RobotView view;
    std::string base;      // identity without twin suffix ("bin:picarx_12s_6m")
    std::string peer_address;  // of the connection it was made or last taken over for
    std::string identity;  // with it
    std::string file;      // save file name in the state dir ("" = no persistence)
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
  };

  bool push(Job job);
  void run();
  void flush(std::vector<StepJob>& pending);
  void run_group(std::vector<StepJob>& group);
  void do_attach(AttachJob& job);
  void do_loaded(LoadedJob& job);
  void do_detach(RobotId id);
  void release(uint64_t entry, bool save);
  void start_recording(Robot& robot);
  void refuse_waiting(Robot& robot, int code, const std::string& why);
  Robot* owned(RobotId id);
  std::string display_key(const BrainClaim& request) const;
  Robot* takeover_candidate(const std::string& base);
  void hand_over(Robot& robot, AttachJob& job, AttachResult result);
  void answer(Robot& robot, AttachDone done, AttachResult result);
  bool queue_save(Robot& robot, bool final_save);
  void publish_if_wanted(Robot& robot);
  void watch_latency(Robot& robot);

  BrainEngine& engine_;
  WorkerOptions options_;
  ServerStats& stats_;
  StateWriter writer_;
  JobThread loader_;
  std::atomic<bool> loader_cancelled_{false};

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool started_ = false;
  std::thread thread_;

  // Worker-thread state.
  IdentityStore identities_;
  std::map<uint64_t, Robot> brains_;    // by entry number
  std::map<RobotId, uint64_t> owners_;  // connection -> entry
  uint64_t next_entry_ = 1;
  RobotId next_id_ = 1;

  std::mutex publish_mutex_;
  Publish publish_;
  std::multiset<int64_t> periods_;

  std::atomic<uint64_t> brain_calls_{0};
  std::atomic<uint64_t> frames_stepped_{0};
  std::atomic<uint64_t> brain_us_{0};
  std::atomic<uint64_t> identity_write_failures_{0};
};

}  // namespace fieldbrain::server
