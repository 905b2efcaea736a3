// What the brain worker asks of a fleet of servers (docs/fleet.md). The worker holds a null
// pointer when the server runs alone; cluster/fleet_gate.h is the etcd implementation. The
// interface lives here, beside the worker that uses it, so worker/ never includes cluster/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/server/worker/identity_store.h"

namespace fieldbrain::server {

struct FleetAdmission {
  bool ok = false;
  int code = 0;                // legacy error code when refused
  std::string error;           // the sentence the robot and the log get
  IdentityRecord record;       // the fleet's record of the identity, as decided
  std::string issued_token;    // a token to hand out (first claim of a protected JSON id)
};

class FleetMembership {
 public:
  using LostHandler = std::function<void(const std::vector<std::string>& identities)>;
  using HandoverHandler = std::function<void(const std::string& identity)>;

  virtual ~FleetMembership() = default;

  // Checks the claim against the fleet's identity records (tokens, sizes), takes the robot for
  // this server (asking the server that runs it to hand it over, up to takeover_after_s) and
  // stores a first claim's record in the fleet. `done` runs on another thread, maybe seconds
  // later; a refused admission leaves nothing behind (no record, no ownership).
  virtual void admit(const IdentityClaim& claim, std::function<void(FleetAdmission)> done) = 0;
  // The robot's brain is saved and gone from this server: another may take it.
  virtual void release(const std::string& identity) = 0;
  // Whether this server may write the robot's save now (it holds the robot on a valid lease).
  virtual bool may_save(const std::string& identity) const = 0;
  // Whether this server can take new robots (its /healthz).
  virtual bool healthy() const = 0;
  // Set before start. lost: these robots are no longer this server's (close them, never save
  // them). handover: another server asks for the robot (save it, close it, then release()).
  virtual void set_handlers(LostHandler lost, HandoverHandler handover) = 0;
};

}  // namespace fieldbrain::server
