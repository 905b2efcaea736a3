// The robots whose brains this server holds, on the brain worker thread (no locks). The
// registry composes three parts, each with one job, over one table of entries
// (robot_table.h):
//   - admission and quotas (robot_admission.h): whether a claim may hold a brain here, and
//     whether by taking over a silent brain of its identity or with a new one;
//   - fleet handover (fleet_handover.h): fleet mode's questions to the fleet before
//     admission, the robot given back once its final save is on disk, the fleet's events;
//   - storage (robot_storage.h): save files, loads, the periodic, final and monitor's saves,
//     a poisoned brain's restore, and recordings.
// What is left here is the life of an entry that ties them together: attach (a brain taken
// over or placed new), the load's answer, detach and release.
//
// The seam for holding robots elsewhere: RobotAdmission::admit() is the one place that decides
// whether a claim may hold a brain here, release() the one place a brain leaves. A rule about
// where a robot's brain may live (e.g. one owner across servers) goes into these two.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_engine.h"
#include "app/server/worker/fleet_handover.h"
#include "app/server/worker/robot_admission.h"
#include "app/server/worker/robot_entry.h"
#include "app/server/worker/robot_storage.h"
#include "app/server/worker/robot_table.h"
#include "app/server/worker/robot_types.h"

namespace fieldbrain::server {

class RobotRegistry {
 public:
  // How results of the loader and writer threads come back to the worker thread (they are
  // queued as jobs; any thread).
  struct Callbacks {
    std::function<void(LoadedBrain)> loaded;
    std::function<void(uint64_t entry)> saved;
    // Fleet mode: a claim the fleet has answered, back into the worker's queue (any thread).
    std::function<void(BrainClaim, AttachDone)> requeue_attach;
  };

  RobotRegistry(BrainEngine& engine, const WorkerOptions& options, ServerStats& stats,
                Callbacks callbacks);

  // Removes stale "*.tmp-*" files of the state dir, reads its identity file (throws
  // std::runtime_error when that is unreadable) and starts the writer and loader threads.
  void start();
  // Stopping: loads not yet begun are dropped from now on (any thread).
  void cancel_loads() { storage_.cancel_loads(); }
  // After the worker thread has ended: runs the loader dry, waits for the writer.
  void stop_threads() { storage_.stop_threads(); }

  // Worker thread. Every job of one robot arrives in order.
  void attach(BrainClaim claim, AttachDone done);
  void loaded(LoadedBrain& loaded);
  void detach(RobotId id);
  void saved(uint64_t entry);
  void release_all();  // shutdown: every brain saved once more and released
  // Fleet mode (FleetMembership's handlers, brought to the worker thread).
  void fleet_lost(const std::vector<std::string>& identities);
  void fleet_handover(const std::string& identity);

  // The entry connection `id` drives; null when it was taken over or released.
  RobotEntry* owned(RobotId id) { return robots_.owned(id); }
  // A robot whose brain stopped being finite (RobotStorage::restore_poisoned).
  std::string restore_poisoned(RobotEntry& robot, int64_t cycle) {
    return storage_.restore_poisoned(robot, cycle);
  }
  // After a step: the periodic save when its cycle is due (save_every_cycles).
  void after_step(RobotEntry& robot) { storage_.after_step(robot); }

  std::vector<RobotView> robots() const { return robots_.robots(); }
  const RobotView* robot_by_key(const std::string& key) const { return robots_.robot_by_key(key); }
  BrainEngine::Slot slot_of(RobotId id) const { return robots_.slot_of(id); }
  size_t live_brains() const { return robots_.live_brains(); }
  size_t connections() const { return robots_.connections(); }
  // The monitor's `save` (BrainWorker::save_all).
  nlohmann::json save_all() { return storage_.save_all(robots_); }

  // Any thread.
  std::vector<std::string> unsaved() const { return storage_.unsaved(); }
  uint64_t saves() const { return storage_.saves(); }
  uint64_t identity_write_failures() const { return admission_.identity_write_failures(); }

 private:
  void hand_over(RobotEntry& robot, BrainClaim& claim, AttachDone done, AttachResult result);
  void place_new(BrainClaim& claim, const RobotAdmission::Decision& admission, AttachDone done,
                 AttachResult result);
  void answer(RobotEntry& robot, AttachDone done, AttachResult result);
  void refuse_waiting(RobotEntry& robot, int code, const std::string& why);
  // Saves (when asked and it has a brain) and frees one entry.
  void release(uint64_t entry, bool save);
  // Closes a robot for the fleet (FleetHandover::Close).
  void close_for_fleet(uint64_t entry, int code, const std::string& why, bool save);

  BrainEngine& engine_;
  const WorkerOptions& options_;
  RobotTable robots_;
  RobotAdmission admission_;
  FleetHandover fleet_;
  RobotStorage storage_;
};

}  // namespace fieldbrain::server
