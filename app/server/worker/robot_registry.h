// The robots whose brains this server holds, on the brain worker thread (no locks): attach
// (identity and tokens, the live-brain quotas, takeover of a silent connection, twins), the
// loads of saved brains on the loader thread, release with its final save, the periodic and
// the monitor's saves, and the monitor's views of the robots. robot_registry.cpp holds attach,
// takeover, release and the views; robot_registry_saves.cpp the loads and saves.
//
// The seam for holding robots elsewhere: admit() is the one place that decides whether a claim
// may hold a brain here (and how: by taking over a brain of its identity, or with a new one),
// release() the one place a brain leaves. A rule about where a robot's brain may live (e.g.
// one owner across servers) goes into these two, nowhere else.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/server/stats/robot_rate_log.h"
#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_engine.h"
#include "app/server/worker/identity_store.h"
#include "app/server/worker/job_thread.h"
#include "app/server/worker/latency_watch.h"
#include "app/server/worker/recorder.h"
#include "app/server/worker/robot_types.h"
#include "app/server/worker/state_writer.h"

namespace fieldbrain::server {

// One brain in memory. Its owner (view.id) is the connection that uses it; 0 when none.
struct RobotEntry {
  uint64_t entry_number = 0;  // the registry's key
  RobotView view;
  std::string base;          // identity without twin suffix ("bin:picarx_12s_6m")
  std::string peer_address;  // of the connection it was made or last taken over for
  std::string identity;      // with it
  std::string file;          // save file name in the state dir ("" = no persistence)
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
  RobotRateLog rate_log;        // the periodic rate/latency line (robot_report_interval_s)
};

// A brain the loader thread built (or failed to build) from a robot's save.
struct LoadedBrain {
  uint64_t entry = 0;
  std::unique_ptr<BrainEngine::Detached> brain;
  std::string error;
  bool missing = false;  // no save after all (the write it waited for failed)
  // The save is intact but made for another configuration (brain/save_mismatch.h): the robot
  // is refused and the file kept as it is, so going back to that configuration resumes it.
  bool other_config = false;
};

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
  void cancel_loads() { loader_cancelled_ = true; }
  // After the worker thread has ended: runs the loader dry, waits for the writer.
  void stop_threads();

  // Worker thread. Every job of one robot arrives in order.
  void attach(BrainClaim claim, AttachDone done);
  void loaded(LoadedBrain& loaded);
  void detach(RobotId id);
  void saved(uint64_t entry);
  void release_all();  // shutdown: every brain saved once more and released
  // Fleet mode (FleetMembership's handlers, brought to the worker thread): robots this server
  // no longer holds (closed, not saved), and a robot another server asks for (saved, closed,
  // then given to the fleet once the save is on disk).
  void fleet_lost(const std::vector<std::string>& identities);
  void fleet_handover(const std::string& identity);

  // The entry connection `id` drives; null when it was taken over or released.
  RobotEntry* owned(RobotId id);
  // A robot whose brain stopped being finite (its motors came back NaN): the brain is dropped
  // and replaced by the robot's last good save, loaded on the loader thread as at attach (its
  // frames get a safe stop meanwhile), or by a fresh brain when it has none. Logs the event
  // once (kCodeBrainStateNotFinite) and returns what the robot is told.
  // robot_registry_restore.cpp.
  std::string restore_poisoned(RobotEntry& robot, int64_t cycle);
  // After a step: the periodic save when its cycle is due (save_every_cycles).
  void after_step(RobotEntry& robot);

  std::vector<RobotView> robots() const;  // connected, brain ready (not loading)
  const RobotView* robot_by_key(const std::string& key) const;
  BrainEngine::Slot slot_of(RobotId id) const;           // throws while loading
  size_t live_brains() const { return brains_.size(); }  // loading ones included
  size_t connections() const { return owners_.size(); }
  // The monitor's `save` (BrainWorker::save_all).
  nlohmann::json save_all();

  // Any thread.
  std::vector<std::string> unsaved() const { return writer_.unsaved(); }
  uint64_t saves() const { return writer_.writes(); }
  uint64_t identity_write_failures() const { return identity_write_failures_.load(); }

 private:
  // What admit() decided about a claim.
  struct Admission {
    int code = 0;                    // refused: the protocol error code (0 = admitted)
    std::string error;               // refused: why
    std::string key;                 // the display key (binary robots: with address or name)
    std::string base;                // its identity
    RobotEntry* takeover = nullptr;  // a brain of this identity the claim takes over, or
                                     // null: a new brain (fresh, resumed or a twin)
    std::string token;               // issued now ("" = none)
  };
  // The one decision "may this claim hold a brain here": the live-brain quotas, identity and
  // token (recorded in identities.json when new), takeover of a silent connection. A refused
  // claim changes nothing.
  Admission admit(const BrainClaim& claim);
  // admit()'s first half, the live-brain quotas (also checked before the fleet is asked, so a
  // robot this server would refuse never gets a token stored in the fleet).
  Admission check_quotas(const BrainClaim& claim);
  void release(uint64_t entry, bool save);
  // Fleet mode: gives `base` back to the fleet when no brain of it is left here.
  void fleet_release_if_unused(const std::string& base);

  std::string display_key(const BrainClaim& claim) const;
  RobotEntry* takeover_candidate(const std::string& base);
  void hand_over(RobotEntry& robot, BrainClaim& claim, AttachDone done, AttachResult result);
  void place_new(BrainClaim& claim, const Admission& admission, AttachDone done,
                 AttachResult result);
  void answer(RobotEntry& robot, AttachDone done, AttachResult result);
  void refuse_waiting(RobotEntry& robot, int code, const std::string& why);
  void start_recording(RobotEntry& robot);
  bool queue_save(RobotEntry& robot, bool final_save);
  // Loads robot.load_path on the loader thread (after any write of robot.file lands); the
  // result comes back through callbacks_.loaded. False when the loader has stopped.
  bool post_load(const RobotEntry& robot);

  BrainEngine& engine_;
  const WorkerOptions& options_;
  ServerStats& stats_;
  Callbacks callbacks_;
  StateWriter writer_;
  JobThread loader_;
  std::atomic<bool> loader_cancelled_{false};

  IdentityStore identities_;
  std::map<uint64_t, RobotEntry> brains_;  // by entry number
  std::map<RobotId, uint64_t> owners_;     // connection -> entry
  uint64_t next_entry_ = 1;
  RobotId next_id_ = 1;
  std::atomic<uint64_t> identity_write_failures_{0};
  // Fleet mode: entries whose final save is being written; the robot goes back to the fleet
  // when it is on disk (saved()), so the next server loads the latest brain.
  std::map<uint64_t, std::string> release_after_save_;
};

}  // namespace fieldbrain::server
