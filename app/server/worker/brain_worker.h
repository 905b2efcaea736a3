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
// This file is the queue and the tick. The robots themselves are the robot registry's
// (robot_registry.h: admission and quotas, fleet handover, storage), telemetry for the
// monitor's subscribers the publisher's (telemetry_publisher.h).
//
// Disks never hold up a tick: a save is a host copy of the robot's state taken on this
// thread (BrainEngine::snapshot), which the state writer thread (state_writer.h) digests,
// serialises and fsyncs while every robot, the one being saved included, keeps cycling; a
// robot's saved brain is loaded on a loader thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_engine.h"
#include "app/server/worker/robot_registry.h"
#include "app/server/worker/robot_types.h"
#include "app/server/worker/telemetry_publisher.h"

namespace fieldbrain::server {

class BrainWorker {
 public:
  using AttachDone = server::AttachDone;
  using StepDone = std::function<void(StepResult)>;
  using Query = std::function<void(BrainWorker&)>;
  // Called on the worker thread for each cycle whose number is a multiple of a subscribed
  // period: (cycle, the telemetry line as compact JSON).
  using Publish = TelemetryPublisher::Publish;

  BrainWorker(BrainEngine& engine, WorkerOptions options, ServerStats& stats);
  ~BrainWorker();  // stop()s

  // Removes stale "*.tmp-*" files of the state dir and reads its identity file; throws
  // std::runtime_error when that file is unreadable.
  void start();
  // Finishes the queued jobs, saves every attached robot, waits for the writer. Idempotent.
  void stop();
  // After stop(): robots whose final save failed (their latest state is lost).
  std::vector<std::string> unsaved() const { return robots_.unsaved(); }
  // Identity-file writes that failed (each refused a handshake); main() exits 3 like for a
  // failed final save, so an operator learns the state disk needs attention.
  uint64_t identity_write_failures() const { return robots_.identity_write_failures(); }

  // Returns false (and never calls `done`) once stop() has begun.
  bool attach(BrainClaim request, AttachDone done);
  bool step(RobotId id, std::vector<float> sensors, float reward, StepDone done);
  bool detach(RobotId id);
  bool query(Query fn);

  // Subscriptions: telemetry is computed only for cycles some subscriber wants.
  void set_publisher(Publish publish) { publisher_.set_publisher(std::move(publish)); }
  void add_period(int64_t every_n) { publisher_.add_period(every_n); }
  void remove_period(int64_t every_n) { publisher_.remove_period(every_n); }

  // Worker-thread-only accessors, for queries. robots() lists connected robots whose brain is
  // ready (not the ones still loading).
  BrainEngine& engine() { return engine_; }
  // Fleet mode's membership, null when the server runs alone (any thread).
  FleetMembership* fleet() const { return options_.fleet; }
  std::vector<RobotView> robots() const { return robots_.robots(); }
  const RobotView* robot_by_key(const std::string& key) const { return robots_.robot_by_key(key); }
  BrainEngine::Slot slot_of(RobotId id) const { return robots_.slot_of(id); }
  // Brains held in memory, loading ones included (what max_live_brains bounds).
  size_t live_brains() const { return robots_.live_brains(); }
  // Queues a save of every robot (the monitor's `save`): {"saved":[keys queued for the
  // writer], "skipped":{key: why}, "failed":{key: reason}}. A robot whose last save is still
  // being written, or was taken less than 10 s ago, is skipped (a save storm costs the ticks
  // at most one snapshot per robot per 10 s).
  nlohmann::json save_all() { return robots_.save_all(); }

  // Counters (any thread): brain calls vs. robot-cycles stepped shows the batching.
  uint64_t brain_calls() const { return brain_calls_.load(); }
  uint64_t frames_stepped() const { return frames_stepped_.load(); }
  uint64_t saves() const { return robots_.saves(); }  // saves written to disk
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
  struct SavedJob {  // the writer ran (or dropped) a snapshot of this entry's brain
    uint64_t entry;
  };
  using Job = std::variant<AttachJob, StepJob, DetachJob, QueryJob, LoadedBrain, SavedJob>;

  bool push(Job job);
  void run();
  void flush(std::vector<StepJob>& pending);
  void run_group(std::vector<StepJob>& group);
  void watch_latency(RobotEntry& robot);
  void report_rate(RobotEntry& robot);

  BrainEngine& engine_;
  WorkerOptions options_;
  ServerStats& stats_;
  RobotRegistry robots_;  // worker thread only (its writer and loader are thread-safe)
  TelemetryPublisher publisher_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool started_ = false;
  std::thread thread_;

  // Worker thread: one group's step inputs and motors, reused tick after tick.
  std::vector<BrainEngine::Slot> tick_slots_;
  std::vector<float> tick_sensors_, tick_rewards_, tick_motors_;

  // The engine ignores rewards (the legacy profile's legacy_reward "drop"): the ones robots
  // send are counted (ServerStats::reward_dropped). Read once from the engine's description.
  bool drops_rewards_ = false;

  std::atomic<uint64_t> brain_calls_{0};
  std::atomic<uint64_t> frames_stepped_{0};
  std::atomic<uint64_t> brain_us_{0};
};

}  // namespace fieldbrain::server
