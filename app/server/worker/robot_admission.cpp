#include "app/server/worker/robot_admission.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "app/server/protocol/handshake.h"
#include "app/server/worker/fleet_membership.h"

namespace fieldbrain::server {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

RobotAdmission::Decision refuse_decision(RobotAdmission::Decision d, int code, std::string why) {
  d.code = code;
  d.error = std::move(why);
  d.takeover = nullptr;
  return d;
}

}  // namespace

void RobotAdmission::open_identities() {
  if (!options_.state_dir.empty()) identities_.open(options_.state_dir);
}

std::string RobotAdmission::display_key(const BrainClaim& claim) const {
  const WireHandshake& hs = claim.handshake;
  if (hs.json_namespace) return hs.identity;
  const auto& policy = options_.policy;
  auto named = policy.address_names.find(claim.peer_address);
  if (named != policy.address_names.end()) return hs.identity + "@" + named->second;
  if (policy.binary_key == "address") return hs.identity + "@" + claim.peer_address;
  return hs.identity;
}

IdentityClaim RobotAdmission::identity_claim(const BrainClaim& claim) const {
  return IdentityClaim{claim.handshake, display_key(claim)};
}

// A brain of this identity that a new handshake may take: one whose connection is gone, one
// a JSON client is still waiting for (its reply comes after the load: a client that gave up
// waiting and retried), or one whose connection has been silent for takeover_after_s (a
// robot whose WiFi dropped and that came back). A binary robot was answered at once and gets
// safe stops while its save loads: it is a live robot like a cycling one, so a second robot
// of its identity gets a twin instead of closing it (issue 40 item 1).
RobotEntry* RobotAdmission::takeover_candidate(const std::string& base) {
  for (auto& [entry, robot] : robots_.entries()) {
    if (robot.base != base) continue;
    if (robot.view.id == 0 || (!robot.slot && robot.json)) return &robot;
    if (!robot.in_flight && seconds_since(robot.last_active) >= options_.policy.takeover_after_s) {
      return &robot;
    }
  }
  return nullptr;
}

RobotAdmission::Decision RobotAdmission::check_quotas(const BrainClaim& claim,
                                                      const IdentityClaim& identity) {
  Decision d;
  d.key = identity.key;
  d.base = identity_of(identity);
  d.takeover = takeover_candidate(d.base);
  const bool in_use = robots_.holds_base(d.base);
  // A new brain (fresh, resumed or a twin) must fit under the cap; a takeover needs none.
  const bool needs_brain = !d.takeover && !(in_use && identity.handshake.json_namespace);
  const int cap = options_.policy.max_live_brains;
  if (needs_brain && robots_.live_brains() >= static_cast<size_t>(cap)) {
    return refuse_decision(d, kCodeSessionLimit,
                           "the server holds its limit of " + std::to_string(cap) +
                               " live brains (robots.max_live_brains); try again later");
  }
  // One address may not take every slot (issue 24 item 4): its own, smaller cap.
  const int per_address = options_.policy.live_brains_per_address();
  const auto from_address = [&](const RobotEntry& r) {
    return r.peer_address == claim.peer_address;
  };
  if (needs_brain && robots_.count(from_address) >= static_cast<size_t>(per_address)) {
    return refuse_decision(
        d, kCodeSessionLimit,
        "address " + claim.peer_address + " holds its limit of " + std::to_string(per_address) +
            " live brains (robots.max_live_brains_per_address); try again later");
  }
  return d;
}

RobotAdmission::Decision RobotAdmission::admit(const BrainClaim& claim,
                                               const IdentityClaim& identity) {
  Decision d = check_quotas(claim, identity);
  if (d.code != 0) return d;
  const bool in_use = robots_.holds_base(d.base);
  if (claim.fleet_admission) {
    // The fleet decided against its own records (cluster/fleet_gate.h) and holds the
    // identity; this server keeps a copy in memory only, and writes no identities.json.
    identities_.put(d.base, claim.fleet_admission->record);
    d.token = claim.fleet_admission->issued_token;
  } else if (!decide_locally(identity, d)) {
    return d;
  }
  if (!d.takeover && in_use && identity.handshake.json_namespace) {
    return refuse_decision(d, kCodeDuplicateSession,
                           "robot_id '" + identity.key +
                               "' is in use by a connection that is cycling; a new "
                               "handshake takes it over once that one has been silent for " +
                               fmt::format("{:g}", options_.policy.takeover_after_s) + " s");
  }
  return d;
}

bool RobotAdmission::decide_locally(const IdentityClaim& identity, Decision& d) {
  // Checked before anything is taken over or created: a refused claim changes nothing.
  std::optional<IdentityRecord> before;
  if (const IdentityRecord* r = identities_.find(d.base)) before = *r;
  IdentityDecision decision = decide_identity(identities_, options_.policy, identity);
  if (!decision.ok) {
    d = refuse_decision(d, decision.code, decision.error);
    return false;
  }
  if (decision.store_changed && !options_.state_dir.empty()) {
    // An identity (a token above all) is handed out only once it is on disk: a token that a
    // restart forgets would let the next claimant, token or not, take this robot's brain.
    // A few hundred bytes and one fsync, on a robot's first handshake only.
    try {
      identities_.save(options_.state_dir);
    } catch (const std::exception& e) {
      identity_write_failures_.fetch_add(1);
      const std::string why =
          std::string("writing ") + IdentityStore::kFileName + " failed: " + e.what();
      if (!decision.issued_token.empty()) {
        identities_.restore(d.base, before ? &*before : nullptr);
        stats_.error(kCodePersistenceSave, identity.key,
                     "handshake refused, its token could not be stored: " + why);
        d = refuse_decision(
            d, kCodePersistenceSave,
            "the server cannot store this robot's identity (" + why +
                "); nothing was recorded, try again once the state disk is writable");
        return false;
      }
      // No token at stake (a binary robot, or tokens off): the record (its sizes) stays in
      // memory and goes to disk with the next write that succeeds; the robot runs.
      stats_.error(kCodePersistenceSave, identity.key,
                   why + " (no token involved; the robot runs)");
    }
  }
  d.token = decision.issued_token;
  return true;
}

}  // namespace fieldbrain::server
