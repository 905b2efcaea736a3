// Which server of a fleet runs which robot's brain (docs/fleet.md), held in etcd:
//   /fieldbrain/<cluster>/robots/<identity>    = server id, under this server's lease
//   /fieldbrain/<cluster>/takeover/<identity>  = the id of a server asking for that robot,
//                                                under the asking server's lease
//   /fieldbrain/<cluster>/servers/<server id>  = this server's address, under its lease
// One lease per server, renewed by a thread every `renew_every`. A server attaches a robot's
// brain only after claim() says Owned, and writes its save only while holds() says so: when the
// lease cannot be renewed before it would expire (etcd down, the process stopped), every robot
// is reported lost through on_lost and holds() is false from then on, so a server that was
// frozen past its TTL never writes over the save of the server that took its robots.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/server/cluster/etcd_client.h"

namespace fieldbrain::server::cluster {

struct OwnershipOptions {
  std::string cluster = "default";
  std::string server_id;    // unique in the fleet; the value of its ownership keys
  std::string address;      // what other servers and operators see for it (host:port)
  int64_t lease_ttl_s = 6;  // etcd forgets a silent server's robots after this
  std::chrono::milliseconds renew_every{1000};
  // This server stops trusting its lease this long before etcd would expire it, so two servers
  // never both believe they hold a robot (a renewal reply is late by at most the etcd timeout).
  std::chrono::milliseconds safety_margin{1000};
};

enum class ClaimOutcome {
  Owned,           // this server holds the robot now
  OwnedElsewhere,  // another live server holds it (owner names it)
  Unavailable,     // etcd cannot be reached or this server's lease is not valid (error says)
};

struct ClaimResult {
  ClaimOutcome outcome = ClaimOutcome::Unavailable;
  std::string owner;  // OwnedElsewhere: that server's id
  std::string error;  // Unavailable: why, in a sentence for the robot and the log
};

class RobotOwnership {
 public:
  // Called on the renewal thread. on_lost: the lease could not be kept, these robots are no
  // longer this server's (close them; do not save). on_takeover: another server asks for a
  // robot this server holds (save it, close it, then release()).
  using LostHandler = std::function<void(const std::vector<std::string>& identities)>;
  using TakeoverHandler = std::function<void(const std::string& identity,
                                             const std::string& requester)>;

  RobotOwnership(EtcdClient& etcd, OwnershipOptions options);
  ~RobotOwnership();  // stop()
  RobotOwnership(const RobotOwnership&) = delete;
  RobotOwnership& operator=(const RobotOwnership&) = delete;

  void on_lost(LostHandler handler);
  void on_takeover(TakeoverHandler handler);

  // Grants the lease and starts renewing it. Throws EtcdUnavailable when etcd cannot be reached
  // (a server started with --cluster refuses to start without it).
  void start();
  // Stops renewing and revokes the lease (etcd drops every key of this server at once). Call
  // after the brains are saved.
  void stop();

  // Takes the robot if no live server holds it.
  ClaimResult claim(const std::string& identity);
  // claim(); if another server holds the robot, asks it to hand over and waits up to `wait`
  // (takeover_after_s) for it to release.
  ClaimResult acquire(const std::string& identity, std::chrono::milliseconds wait);
  // Gives the robot up (after its last save): forget() (this server stops holding it at once)
  // then drop_key() (etcd's key goes; a network round trip).
  void release(const std::string& identity);
  bool forget(const std::string& identity);
  void drop_key(const std::string& identity);
  // Whether this server holds the robot and its lease is still trustworthy now: the check
  // before every save of that robot.
  bool holds(const std::string& identity) const;
  bool lease_valid() const;
  std::vector<std::string> owned() const;

  std::string robot_key(const std::string& identity) const;
  std::string takeover_key(const std::string& identity) const;
  std::string server_key() const;
  const OwnershipOptions& options() const { return options_; }

 private:
  void renew_loop();
  void renew_once();
  void poll_takeovers();
  // Drops every robot and the lease; calls on_lost outside the lock.
  void lose_everything(const std::string& why);
  bool valid_locked() const;

  EtcdClient& etcd_;
  OwnershipOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  int64_t lease_ = 0;  // 0: none held (etcd down at the last try)
  std::chrono::steady_clock::time_point valid_until_{};
  std::set<std::string> owned_;
  std::map<std::string, std::string> takeovers_seen_;  // identity -> requester already told
  LostHandler lost_handler_;
  TakeoverHandler takeover_handler_;
  std::thread thread_;
};

}  // namespace fieldbrain::server::cluster
