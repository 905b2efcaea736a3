#include "app/server/worker/fleet_handover.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

#include "app/server/protocol/handshake.h"

namespace fieldbrain::server {

FleetHandover::Next FleetHandover::before_admission(BrainClaim& claim,
                                                    const IdentityClaim& identity, int& code,
                                                    std::string& error) const {
  if (!fleet_) return Next::kAdmit;
  if (claim.fleet_admission && claim.fleet_admission->ok &&
      !fleet_->may_save(identity_of(identity))) {
    // Admitted, but released before this job ran (the final save of the robot's previous
    // connection landed in between): ask the fleet again rather than run a robot not held.
    claim.fleet_admission.reset();
    if (claim.fleet_asks >= 3) {
      code = kCodeSessionLimit;
      error = "the fleet kept giving this robot away; try again";
      return Next::kRefuse;
    }
  }
  if (!claim.fleet_admission) return Next::kAskFleet;
  if (!claim.fleet_admission->ok) {
    code = claim.fleet_admission->code;
    error = claim.fleet_admission->error;
    return Next::kRefuse;
  }
  return Next::kAdmit;
}

void FleetHandover::ask(BrainClaim claim, const IdentityClaim& identity, AttachDone done) {
  ++claim.fleet_asks;
  auto requeue = requeue_;
  fleet_->admit(identity, [requeue, claim = std::move(claim),
                           done = std::move(done)](FleetAdmission answer) mutable {
    claim.fleet_admission = std::make_shared<const FleetAdmission>(std::move(answer));
    requeue(std::move(claim), std::move(done));
  });
}

void FleetHandover::released(uint64_t entry, const std::string& base, bool final_save_queued) {
  if (!fleet_) return;
  if (final_save_queued) {
    release_after_save_[entry] = base;
  } else {
    release_if_unused(base);
  }
}

void FleetHandover::saved(uint64_t entry) {
  auto pending = release_after_save_.find(entry);
  if (pending == release_after_save_.end()) return;
  const std::string base = pending->second;
  release_after_save_.erase(pending);
  release_if_unused(base);
}

void FleetHandover::release_if_unused(const std::string& base) {
  if (!fleet_) return;
  const bool saving = std::any_of(release_after_save_.begin(), release_after_save_.end(),
                                  [&](const auto& e) { return e.second == base; });
  if (!robots_.holds_base(base) && !saving) fleet_->release(base);
}

void FleetHandover::lost(const std::vector<std::string>& identities, const Close& close) {
  const auto entries = robots_.entries_where([&](const RobotEntry& robot) {
    return std::find(identities.begin(), identities.end(), robot.base) != identities.end();
  });
  for (uint64_t entry : entries) {
    spdlog::error(
        "{}: this server no longer holds the robot in the fleet; closing it without "
        "a save (its last save stands)",
        robots_.entries().at(entry).view.key);
    close(entry, kCodeSessionLimit, "this server lost the robot to the fleet", /*save=*/false);
  }
}

void FleetHandover::handover(const std::string& identity, const Close& close) {
  const auto entries =
      robots_.entries_where([&](const RobotEntry& robot) { return robot.base == identity; });
  for (uint64_t entry : entries) {
    spdlog::info("{}: another server of the fleet takes this robot over; saving and closing",
                 robots_.entries().at(entry).view.key);
    close(entry, kCodeDuplicateSession, "another server of the fleet took the robot",
          /*save=*/true);
  }
  if (entries.empty()) release_if_unused(identity);
}

}  // namespace fieldbrain::server
