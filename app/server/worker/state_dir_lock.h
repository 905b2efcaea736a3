// One server per state directory (issue 36 item 4). Two servers on one directory each rewrite
// identities.json with only their own records and save the same robots over each other; after
// a restart a robot's token is gone and anyone may take its trained brain. So a server alone
// holds an exclusive lock on "<state_dir>/server.lock" while it runs, and a second one refuses
// to start (exit 2) naming the holder: the file holds its pid, host and start time.
//
// The lock is flock(2) on an open descriptor (close-on-exec): the kernel drops it when the
// process dies however it dies, so a SIGKILLed or crashed server never leaves it stale, and
// no pid file has to be guessed at. The file itself stays (it is only the lock's anchor).
//
// Fleet servers (docs/fleet.md) share one state directory by design; etcd's leases decide
// which server owns each robot and identities live in etcd. They take the lock shared: any
// number of fleet servers may run on the directory, but a server alone and a fleet server
// never do together (either refuses, naming the other).
//
// On NFS, Linux maps flock to the NFS byte-range locks, which every server of the mount sees.
#pragma once

#include <string>

namespace fieldbrain::server {

class StateDirLock {
 public:
  enum class Mode { kAlone, kFleet };  // exclusive, shared

  // Creates the directory's lock file if needed and takes the lock without waiting. Throws
  // std::runtime_error naming state_dir and the holder when another server holds it.
  // An empty state_dir (persistence off) locks nothing.
  StateDirLock(const std::string& state_dir, Mode mode);
  ~StateDirLock();
  StateDirLock(const StateDirLock&) = delete;
  StateDirLock& operator=(const StateDirLock&) = delete;

  static constexpr const char* kFileName = "server.lock";

 private:
  int fd_ = -1;
};

}  // namespace fieldbrain::server
