// Admission and quotas, the first part of the robot registry (robot_registry.h): the one
// decision "may this claim hold a brain here, and how". It applies the live-brain quotas, the
// identity rules (tokens, sizes; identities.json, which it owns) and picks a silent brain of
// the identity to take over. A refused claim changes nothing. Worker thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "app/server/stats/server_stats.h"
#include "app/server/worker/identity_store.h"
#include "app/server/worker/robot_table.h"
#include "app/server/worker/robot_types.h"

namespace fieldbrain::server {

class RobotAdmission {
 public:
  // What admit() decided about a claim.
  struct Decision {
    int code = 0;                    // refused: the protocol error code (0 = admitted)
    std::string error;               // refused: why
    std::string key;                 // the display key (binary robots: with address or name)
    std::string base;                // its identity
    RobotEntry* takeover = nullptr;  // a brain of this identity the claim takes over, or
                                     // null: a new brain (fresh, resumed or a twin)
    std::string token;               // issued now ("" = none)
  };

  RobotAdmission(const WorkerOptions& options, ServerStats& stats, RobotTable& robots)
      : options_(options), stats_(stats), robots_(robots) {}

  // Reads the state dir's identity file; throws std::runtime_error when it is unreadable.
  void open_identities();
  // What the identity rules (identity_store.h) and the fleet see of a claim: its display key.
  IdentityClaim identity_claim(const BrainClaim& claim) const;
  // admit()'s first half, the live-brain quotas (also checked before the fleet is asked, so a
  // robot this server would refuse never gets a token stored in the fleet).
  Decision check_quotas(const BrainClaim& claim, const IdentityClaim& identity);
  // The quotas, then identity and token (recorded in identities.json when new; fleet mode:
  // the fleet's record, kept in memory only), then whether a cycling JSON robot is in the way.
  Decision admit(const BrainClaim& claim, const IdentityClaim& identity);

  // Any thread.
  uint64_t identity_write_failures() const { return identity_write_failures_.load(); }

 private:
  std::string display_key(const BrainClaim& claim) const;
  RobotEntry* takeover_candidate(const std::string& base);
  // The identity rules for a claim without the fleet; false (and `d` refused) when refused.
  bool decide_locally(const IdentityClaim& identity, Decision& d);

  const WorkerOptions& options_;
  ServerStats& stats_;
  RobotTable& robots_;  // read only, but a takeover candidate is handed on to change
  IdentityStore identities_;
  std::atomic<uint64_t> identity_write_failures_{0};
};

}  // namespace fieldbrain::server
