// The state writer: one thread that writes robots' saves so that the brain thread never waits
// on a disk (the identity file is written by the brain thread itself before a token is handed
// out: identity_store.h). The brain thread hands it a snapshot (a function that
// writes one robot's state, taken during a tick); the writer runs it, fsync and all.
//
// - Writes of one file coalesce: a snapshot queued behind an older one of the same file
//   replaces it (only the newest state matters), so a save storm costs one queued snapshot
//   per robot at most. A snapshot may read the live brain: its `done` callback tells the
//   brain thread when that robot may cycle again.
// - Final saves (a robot leaving, the server stopping) are tracked: unsaved() names every
//   robot whose latest final save failed, for the exit status.
// - With a byte budget, after each write the saves of robots that are not live (not pinned,
//   not queued) are deleted until the directory fits: least trained first (brain cycles),
//   then least recently written, and never a save more trained than the one just written, so
//   throw-away identities (a cycle each) only ever displace each other, never a trained
//   robot (issue 24 item 4; docs/robots.md "Quotas"). A save this process has not written
//   (an older run's) counts as trained: it goes only after every save of known worth.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/server/stats/server_stats.h"

namespace fieldbrain::server {

class StateWriter {
 public:
  // Writes the state to the given path (atomically); throws std::exception on failure.
  using Snapshot = std::function<void(const std::string& path)>;

  StateWriter(std::string dir, int64_t max_bytes, ServerStats& stats);
  ~StateWriter();  // stop()s

  void start();
  // Writes everything queued, then joins. Idempotent.
  void stop();

  // Queues `snapshot` for "<dir>/<file>" on behalf of robot `robot_key`. `done` runs (on the
  // writer thread, or here when a newer snapshot of the file replaces this one) once the
  // snapshot has been run or dropped.
  // `cycles` is the brain's age in the snapshot, its worth for the budget (-1 = unknown).
  void write(const std::string& file, const std::string& robot_key, Snapshot snapshot,
             bool final_save, std::function<void()> done = nullptr, int64_t cycles = -1);

  // True while a write of `file` is queued or running.
  bool pending(const std::string& file) const;
  // Blocks until no write of `file` is queued or running (the loader, before it reads a save
  // that a robot's last connection is still writing).
  void wait_written(const std::string& file);
  // Pinned files (live robots' saves) are never evicted.
  void pin(const std::string& file);
  void unpin(const std::string& file);

  // A final save that failed before it reached the writer (the snapshot could not be taken).
  void mark_unsaved(const std::string& robot_key);

  uint64_t writes() const;  // snapshots written successfully
  std::vector<std::string> unsaved() const;
  int64_t evicted_files() const;

 private:
  struct Job {
    std::string robot_key;
    Snapshot snapshot;
    bool final_save = false;
    std::function<void()> done;
    int64_t cycles = -1;
  };
  void run();
  void write_one(const std::string& file, Job& job);
  // `written`: the file just written and its cycles (the newcomer no save may be evicted for
  // when it is worth more).
  void enforce_budget(const std::string& written, int64_t written_cycles);

  const std::string dir_;
  const int64_t max_bytes_;
  ServerStats& stats_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable written_;
  std::deque<std::string> order_;      // files in queue order
  std::map<std::string, Job> queued_;  // by file
  std::string running_;                // file being written ("" = none)
  std::map<std::string, int64_t> cycles_;  // file -> cycles of its last successful write
  std::multiset<std::string> pinned_;
  std::set<std::string> unsaved_;
  uint64_t writes_ = 0;
  int64_t evicted_ = 0;
  bool stopping_ = false;
  bool started_ = false;
  std::thread thread_;
};

}  // namespace fieldbrain::server
