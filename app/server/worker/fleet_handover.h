// Fleet handover, the second part of the robot registry (robot_registry.h), for fleet mode
// (docs/fleet.md): the fleet is asked about a claim before admission (off this thread, since it
// may wait for another server to hand the robot over), a robot goes back to the fleet only
// once no brain of it is left here and its final save is on disk, and the fleet's events
// (robots lost, a robot another server asks for) close robots here. Without a fleet (a server
// alone) every method is a no-op. Worker thread only, but for the fleet's own callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/server/worker/fleet_membership.h"
#include "app/server/worker/robot_table.h"
#include "app/server/worker/robot_types.h"

namespace fieldbrain::server {

class FleetHandover {
 public:
  // A claim the fleet has answered, back into the worker's queue (any thread).
  using Requeue = std::function<void(BrainClaim, AttachDone)>;
  // Closes a robot here: its waiting handshakes refused with (code, why), its connection told
  // it was taken over, its brain released (saved first when `save`). The registry's.
  using Close = std::function<void(uint64_t entry, int code, const std::string& why, bool save)>;

  // What a claim needs before admission.
  enum class Next {
    kAdmit,     // no fleet, or the fleet admitted it: admission decides
    kAskFleet,  // ask() the fleet (after the quotas, so a refused robot stores nothing there)
    kRefuse,    // the fleet refused it, or kept giving it away: `code` and `error`
  };

  FleetHandover(FleetMembership* fleet, const RobotTable& robots, Requeue requeue)
      : fleet_(fleet), robots_(robots), requeue_(std::move(requeue)) {}

  Next before_admission(BrainClaim& claim, const IdentityClaim& identity, int& code,
                        std::string& error) const;
  // Asks the fleet; the answered claim comes back through the Requeue.
  void ask(BrainClaim claim, const IdentityClaim& identity, AttachDone done);

  // Whether this server may write the robot's save now (always, without a fleet).
  bool may_save(const std::string& base) const { return !fleet_ || fleet_->may_save(base); }
  // A brain left (entry, of identity `base`): the robot goes back to the fleet once its final
  // save is on disk (saved()), or now when there is none to wait for.
  void released(uint64_t entry, const std::string& base, bool final_save_queued);
  void saved(uint64_t entry);
  // Gives `base` back to the fleet when no brain of it is left here.
  void release_if_unused(const std::string& base);

  // The fleet's events, brought to the worker thread: robots this server no longer holds
  // (closed, not saved), and a robot another server asks for (saved, closed, then given to
  // the fleet once the save is on disk).
  void lost(const std::vector<std::string>& identities, const Close& close);
  void handover(const std::string& identity, const Close& close);

 private:
  FleetMembership* fleet_;  // null: this server runs alone
  const RobotTable& robots_;
  Requeue requeue_;
  // Entries whose final save is being written; the robot goes back to the fleet when it is on
  // disk (saved()), so the next server loads the latest brain.
  std::map<uint64_t, std::string> release_after_save_;
};

}  // namespace fieldbrain::server
