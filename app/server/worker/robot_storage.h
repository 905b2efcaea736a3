// Storage, the third part of the robot registry (robot_registry.h): where a robot's brain is
// saved and whether a save of it is to be loaded, the loads on the loader thread and what
// their results make of a robot, the periodic, final and monitor's saves through the state
// writer thread, the answer to a brain that stopped being finite (its last good save), and
// each connection's recording (--record). Worker thread, but for the loader and writer
// threads it owns (their results come back through the callbacks, as jobs).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_engine.h"
#include "app/server/worker/job_thread.h"
#include "app/server/worker/robot_table.h"
#include "app/server/worker/robot_types.h"
#include "app/server/worker/state_writer.h"

namespace fieldbrain::server {

class RobotStorage {
 public:
  // How results of the loader and writer threads come back to the worker thread (any thread).
  struct Callbacks {
    std::function<void(LoadedBrain)> loaded;
    std::function<void(uint64_t entry)> saved;
  };
  // Whether this server may write a robot's save now (fleet mode: it holds the robot).
  using MaySave = std::function<bool(const std::string& base)>;

  // What a load's result made of a robot: a brain (code 0), or the refusal its waiting
  // handshakes get before it is released unsaved.
  struct LoadOutcome {
    int code = 0;
    std::string why;
  };

  RobotStorage(BrainEngine& engine, const WorkerOptions& options, ServerStats& stats,
               Callbacks callbacks, MaySave may_save);

  // Creates the state dir and removes its stale "*.tmp-*" files.
  void prepare_state_dir();
  void start_threads();
  // Stopping: loads not yet begun are dropped from now on (any thread).
  void cancel_loads() { loader_cancelled_ = true; }
  // After the worker thread has ended: runs the loader dry, waits for the writer.
  void stop_threads();

  // A new entry's save file, and the save to load (its own, one still being written, or an
  // older release's under its display key).
  void locate_save(RobotEntry& robot);
  // The robot's save file is in use: the state-dir budget never deletes it.
  void pin_save(const RobotEntry& robot);
  // Loads robot.load_path on the loader thread (after any write of robot.file lands); the
  // result comes back through Callbacks::loaded. False when the loader has stopped.
  bool post_load(const RobotEntry& robot);
  // Takes a load's result into the robot: the loaded brain, or a fresh one when the save
  // was missing or did not load (moved aside, or left in place when an older release's).
  LoadOutcome take_loaded(RobotEntry& robot, LoadedBrain& job);
  // A robot whose brain stopped being finite: the brain is dropped and replaced by its last
  // good save (loaded as at attach; safe stops meanwhile) or a fresh brain when it has none.
  // Logs the event once and returns what the robot is told. robot_storage_restore.cpp.
  std::string restore_poisoned(RobotEntry& robot, int64_t cycle);

  // A snapshot of the robot for the writer; false when none was queued (no file, no brain,
  // not the fleet's to save, or the snapshot failed).
  bool queue_save(RobotEntry& robot, bool final_save);
  // After a step: the periodic save when its cycle is due (save_every_cycles).
  void after_step(RobotEntry& robot);
  // The writer finished (or dropped) a snapshot of `robot` (null: released since).
  void saved(RobotEntry* robot);
  // The monitor's `save` (BrainWorker::save_all).
  nlohmann::json save_all(RobotTable& robots);

  // One recording per connection that drives a brain; a takeover starts a new one.
  void start_recording(RobotEntry& robot);
  // The robot is leaving: its recording closed, its save file no longer pinned.
  void let_go(RobotEntry& robot);

  // Any thread.
  std::vector<std::string> unsaved() const { return writer_.unsaved(); }
  uint64_t saves() const { return writer_.writes(); }

 private:
  BrainEngine& engine_;
  const WorkerOptions& options_;
  ServerStats& stats_;
  Callbacks callbacks_;
  MaySave may_save_;
  StateWriter writer_;
  JobThread loader_;
  std::atomic<bool> loader_cancelled_{false};
};

}  // namespace fieldbrain::server
