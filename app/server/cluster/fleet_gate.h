// FleetMembership over etcd (docs/fleet.md): robot ownership (robot_ownership.h) and the
// fleet's identity records under /fieldbrain/<cluster>/identities/<identity>, so a token issued
// through one server is checked by every other. Admissions run on a small thread pool of their
// own, since one may wait seconds for another server to hand a robot over.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "app/server/config/cluster_config.h"
#include "app/server/cluster/etcd_client.h"
#include "app/server/worker/fleet_membership.h"
#include "app/server/cluster/robot_ownership.h"
#include "app/server/config/robot_policy.h"

namespace fieldbrain::server::cluster {

class FleetGate : public FleetMembership {
 public:
  // `server_id` is config.server_id or the name the server chose for itself; `address` is what
  // operators see for it. Throws std::invalid_argument on a bad setting.
  FleetGate(const ClusterConfig& config, std::string server_id, std::string address,
            RobotPolicy policy);
  ~FleetGate() override;

  // Joins the fleet: takes this server's lease. Throws EtcdUnavailable when etcd does not
  // answer (the server refuses to start, naming the endpoints).
  void start();
  // Waits for admissions in flight, then leaves the fleet (revokes the lease: every robot of
  // this server is free at once). Call after the final saves.
  void stop();

  void admit(const IdentityClaim& claim, std::function<void(FleetAdmission)> done) override;
  void release(const std::string& identity) override;
  bool may_save(const std::string& identity) const override;
  bool healthy() const override;
  void set_handlers(LostHandler lost, HandoverHandler handover) override;

  std::string identity_key(const std::string& identity) const;
  RobotOwnership& ownership() { return ownership_; }

 private:
  FleetAdmission admit_now(const IdentityClaim& claim);
  // The fleet's record of `identity` and its revision (nullopt: none).
  std::optional<std::pair<IdentityRecord, int64_t>> read_record(const std::string& identity);

  ClusterConfig config_;
  RobotPolicy policy_;
  EtcdClient etcd_;
  RobotOwnership ownership_;
  std::unique_ptr<boost::asio::thread_pool> pool_;
  // Releases whose etcd delete has not landed yet, by identity: an admission of the same robot
  // waits for them, so it never takes a key that is about to be deleted under it.
  std::mutex releasing_mutex_;
  std::condition_variable released_;
  std::map<std::string, int> releasing_;
};

}  // namespace fieldbrain::server::cluster
