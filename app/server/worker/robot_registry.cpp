#include "app/server/worker/robot_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "app/server/cluster/fleet_membership.h"
#include "app/server/protocol/handshake.h"
#include "app/server/protocol/wall_clock.h"
#include "app/server/worker/state_files.h"

namespace fieldbrain::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// What the identity rules (identity_store.h) and the fleet see of a handshake.
IdentityClaim identity_claim(const BrainClaim& req, const std::string& key) {
  IdentityClaim claim;
  claim.json = req.json;
  claim.key = key;
  claim.sensory_dim = req.sensory_dim;
  claim.motor_dim = req.motor_dim;
  claim.token = req.token;
  return claim;
}

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

}  // namespace

RobotRegistry::RobotRegistry(BrainEngine& engine, const WorkerOptions& options, ServerStats& stats,
                             Callbacks callbacks)
    : engine_(engine),
      options_(options),
      stats_(stats),
      callbacks_(std::move(callbacks)),
      writer_(options_.state_dir, options_.policy.state_dir_max_bytes, stats) {}

RobotEntry* RobotRegistry::owned(RobotId id) {
  auto it = owners_.find(id);
  if (it == owners_.end()) return nullptr;
  return &brains_.at(it->second);
}

std::string RobotRegistry::display_key(const BrainClaim& claim) const {
  if (claim.json) return claim.key;
  const auto& policy = options_.policy;
  auto named = policy.address_names.find(claim.peer_address);
  if (named != policy.address_names.end()) return claim.key + "@" + named->second;
  if (policy.binary_key == "address") return claim.key + "@" + claim.peer_address;
  return claim.key;
}

// A brain of this identity that a new handshake may take: one whose connection is gone, one
// a JSON client is still waiting for (its reply comes after the load: a client that gave up
// waiting and retried), or one whose connection has been silent for takeover_after_s (a
// robot whose WiFi dropped and that came back). A binary robot was answered at once and gets
// safe stops while its save loads: it is a live robot like a cycling one, so a second robot
// of its identity gets a twin instead of closing it (issue 40 item 1).
RobotEntry* RobotRegistry::takeover_candidate(const std::string& base) {
  for (auto& [entry, robot] : brains_) {
    if (robot.base != base) continue;
    if (robot.view.id == 0 || (!robot.slot && robot.json)) return &robot;
    if (!robot.in_flight && seconds_since(robot.last_active) >= options_.policy.takeover_after_s) {
      return &robot;
    }
  }
  return nullptr;
}

void RobotRegistry::attach(BrainClaim claim, AttachDone done) {
  AttachResult result;
  auto refuse = [&](int code, std::string why) {
    result.code = code;
    result.error = std::move(why);
    done(std::move(result));
  };
  if (options_.fleet && claim.fleet_admission && claim.fleet_admission->ok &&
      !options_.fleet->may_save(identity_of(identity_claim(claim, display_key(claim))))) {
    // Admitted, but released before this job ran (the final save of the robot's previous
    // connection landed in between): ask the fleet again rather than run a robot not held.
    claim.fleet_admission.reset();
    if (claim.fleet_asks >= 3) {
      return refuse(kCodeSessionLimit, "the fleet kept giving this robot away; try again");
    }
  }
  if (options_.fleet && !claim.fleet_admission) {
    ++claim.fleet_asks;
    // Fleet mode: the fleet decides first (tokens, which server runs the robot), off this
    // thread, since it may wait for another server to hand the robot over.
    const Admission quota = check_quotas(claim);
    if (quota.code != 0) return refuse(quota.code, quota.error);
    auto requeue = callbacks_.requeue_attach;
    options_.fleet->admit(identity_claim(claim, display_key(claim)),
                          [requeue, claim, done](FleetAdmission answer) mutable {
                            claim.fleet_admission =
                                std::make_shared<const FleetAdmission>(std::move(answer));
                            requeue(std::move(claim), std::move(done));
                          });
    return;
  }
  if (claim.fleet_admission && !claim.fleet_admission->ok) {
    return refuse(claim.fleet_admission->code, claim.fleet_admission->error);
  }
  const Admission admission = admit(claim);
  result.token = admission.token;
  if (admission.code != 0) {
    if (claim.fleet_admission) fleet_release_if_unused(admission.base);
    return refuse(admission.code, admission.error);
  }
  if (admission.takeover) {
    return hand_over(*admission.takeover, claim, std::move(done), std::move(result));
  }
  place_new(claim, admission, std::move(done), std::move(result));
}

RobotRegistry::Admission RobotRegistry::check_quotas(const BrainClaim& req) {
  const IdentityClaim claim = identity_claim(req, display_key(req));
  Admission admission;
  auto refuse = [&](int code, std::string why) {
    admission.code = code;
    admission.error = std::move(why);
    admission.takeover = nullptr;
    return admission;
  };
  admission.key = claim.key;
  admission.base = identity_of(claim);
  const std::string& base = admission.base;
  admission.takeover = takeover_candidate(base);
  const bool in_use = std::any_of(brains_.begin(), brains_.end(),
                                  [&](const auto& e) { return e.second.base == base; });
  // A new brain (fresh, resumed or a twin) must fit under the cap; a takeover needs none.
  const bool needs_brain = !admission.takeover && !(in_use && req.json);
  if (needs_brain && brains_.size() >= static_cast<size_t>(options_.policy.max_live_brains)) {
    return refuse(kCodeSessionLimit, "the server holds its limit of " +
                                         std::to_string(options_.policy.max_live_brains) +
                                         " live brains (robots.max_live_brains); try again later");
  }
  // One address may not take every slot (issue 24 item 4): its own, smaller cap.
  const int per_address = options_.policy.live_brains_per_address();
  if (needs_brain && std::count_if(brains_.begin(), brains_.end(), [&](const auto& e) {
                       return e.second.peer_address == req.peer_address;
                     }) >= per_address) {
    return refuse(kCodeSessionLimit, "address " + req.peer_address + " holds its limit of " +
                                         std::to_string(per_address) +
                                         " live brains (robots.max_live_brains_per_address); "
                                         "try again later");
  }
  return admission;
}

RobotRegistry::Admission RobotRegistry::admit(const BrainClaim& req) {
  const IdentityClaim claim = identity_claim(req, display_key(req));
  Admission admission = check_quotas(req);
  if (admission.code != 0) return admission;
  const std::string& base = admission.base;
  auto refuse = [&](int code, std::string why) {
    admission.code = code;
    admission.error = std::move(why);
    admission.takeover = nullptr;
    return admission;
  };
  const bool in_use = std::any_of(brains_.begin(), brains_.end(),
                                  [&](const auto& e) { return e.second.base == base; });
  if (req.fleet_admission) {
    // The fleet decided against its own records (cluster/fleet_gate.h) and holds the
    // identity; this server keeps a copy in memory only, and writes no identities.json.
    identities_.put(base, req.fleet_admission->record);
    admission.token = req.fleet_admission->issued_token;
  } else {
    // Checked before anything is taken over or created: a refused claim changes nothing.
    std::optional<IdentityRecord> before;
    if (const IdentityRecord* r = identities_.find(base)) before = *r;
    IdentityDecision decision = decide_identity(identities_, options_.policy, claim);
    if (!decision.ok) {
      return refuse(decision.code, decision.error);
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
          identities_.restore(base, before ? &*before : nullptr);
          stats_.error(kCodePersistenceSave, claim.key,
                       "handshake refused, its token could not be stored: " + why);
          return refuse(kCodePersistenceSave,
                        "the server cannot store this robot's identity (" + why +
                            "); nothing was recorded, try again once the state disk is writable");
        }
        // No token at stake (a binary robot, or tokens off): the record (its sizes) stays in
        // memory and goes to disk with the next write that succeeds; the robot runs.
        stats_.error(kCodePersistenceSave, claim.key, why + " (no token involved; the robot runs)");
      }
    }
    admission.token = decision.issued_token;
  }
  if (!admission.takeover && in_use && req.json) {
    return refuse(kCodeDuplicateSession,
                  "robot_id '" + claim.key +
                      "' is in use by a connection that is cycling; a new "
                      "handshake takes it over once that one has been silent for " +
                      fmt::format("{:g}", options_.policy.takeover_after_s) + " s");
  }
  return admission;
}

void RobotRegistry::answer(RobotEntry& robot, AttachDone done, AttachResult result) {
  result.ok = true;
  result.id = robot.view.id;
  result.key = robot.view.key;
  if (robot.slot) {
    result.cycle = engine_.cycle(*robot.slot);
    done(std::move(result));
  } else if (!robot.json) {
    // Binary clients give up on a handshake after ~0.5 s: answer now, load behind it.
    result.loading = true;
    done(std::move(result));
  } else {
    robot.waiting.push_back(std::move(done));  // the reply carries the resumed cycle
  }
}

void RobotRegistry::hand_over(RobotEntry& robot, BrainClaim& claim, AttachDone done,
                              AttachResult result) {
  const double silent = seconds_since(robot.last_active);
  if (robot.view.id != 0) {
    owners_.erase(robot.view.id);
    if (robot.on_taken_over) robot.on_taken_over();
  }
  refuse_waiting(robot, kCodeDuplicateSession, "a newer handshake for this robot took its brain");
  spdlog::info("{}: brain taken over by a new connection from {} (the previous one {})",
               robot.view.key, claim.peer_address,
               robot.view.id == 0 ? std::string("had gone")
               : !robot.slot      ? std::string("was still waiting for the load")
                                  : fmt::format("was silent for {:.1f} s", silent));
  robot.view.id = next_id_++;
  owners_[robot.view.id] = robot.entry_number;
  robot.view.framing = claim.framing;
  robot.peer_address = claim.peer_address;
  robot.view.connected_at = epoch_seconds();
  robot.view.session_cycles = 0;
  robot.brain_ms_total = 0;
  robot.on_taken_over = std::move(claim.on_taken_over);
  robot.last_active = SteadyClock::now();
  robot.in_flight = false;
  start_recording(robot);
  result.resumed = true;
  answer(robot, std::move(done), std::move(result));
}

void RobotRegistry::place_new(BrainClaim& req, const Admission& admission, AttachDone done,
                              AttachResult result) {
  auto refuse = [&](int code, std::string why) {
    result.code = code;
    result.error = std::move(why);
    done(std::move(result));
  };
  // Binary robots that really share a key while both cycle: a twin "#2", "#3", ...
  std::string key = admission.key, identity = admission.base;
  for (int n = 2; std::any_of(brains_.begin(), brains_.end(),
                              [&](const auto& e) { return e.second.identity == identity; });
       ++n) {
    key = admission.key + "#" + std::to_string(n);
    identity = admission.base + "#" + std::to_string(n);
  }
  const uint64_t entry = next_entry_++;
  RobotEntry robot;
  robot.entry_number = entry;
  robot.base = admission.base;
  robot.identity = identity;
  robot.json = req.json;
  robot.latency =
      req.json ? LatencyWatch(options_.policy.json_loop_budget_ms, "robots.json_loop_budget_ms")
               : LatencyWatch(options_.policy.loop_budget_ms, "robots.loop_budget_ms");
  robot.view.key = key;
  robot.peer_address = req.peer_address;
  robot.view.framing = req.framing;
  robot.view.sensory_dim = req.sensory_dim;
  robot.view.motor_dim = req.motor_dim;
  robot.view.connected_at = epoch_seconds();
  robot.on_taken_over = req.on_taken_over;
  robot.last_active = SteadyClock::now();
  if (!options_.state_dir.empty()) {
    robot.file = state_file_name(identity, engine_.state_extension());
    const std::string path = (std::filesystem::path(options_.state_dir) / robot.file).string();
    const std::string legacy = state_path(options_.state_dir, key, engine_.state_extension());
    if (std::filesystem::exists(path) || writer_.pending(robot.file)) {
      // A save still being written (the robot's last connection just left) is loaded once
      // it lands, never skipped for a fresh brain that would then overwrite it.
      robot.load_path = path;
    } else if (std::filesystem::exists(legacy)) {
      robot.load_path = legacy;
      robot.legacy_file = true;
    }
  }
  if (robot.load_path.empty()) {
    try {
      robot.slot = engine_.create(key, req.sensory_dim, req.motor_dim);
    } catch (const std::exception& e) {
      return refuse(kCodeInvalidCapabilities, std::string("brain creation failed: ") + e.what());
    }
    robot.view.cycle = engine_.cycle(*robot.slot);
  } else {
    if (!post_load(robot)) return refuse(kCodeInvalidCapabilities, "server shutting down");
  }
  robot.view.id = next_id_++;
  owners_[robot.view.id] = entry;
  if (!robot.file.empty()) writer_.pin(robot.file);
  RobotEntry& placed = brains_.emplace(entry, std::move(robot)).first->second;
  start_recording(placed);
  result.resumed = !placed.load_path.empty();
  answer(placed, std::move(done), std::move(result));
}

void RobotRegistry::detach(RobotId id) {
  auto owner = owners_.find(id);
  if (owner == owners_.end()) return;  // taken over, or already released
  const uint64_t entry = owner->second;
  owners_.erase(owner);
  RobotEntry& robot = brains_.at(entry);
  robot.view.id = 0;
  refuse_waiting(robot, kCodeConnectionTimeout,
                 "the connection closed while the brain was loading");
  // A brain still loading stays (unowned) so that a retried handshake joins the same load.
  if (robot.slot) release(entry, /*save=*/true);
}

void RobotRegistry::release_all() {
  std::vector<uint64_t> entries;
  for (const auto& [entry, robot] : brains_) entries.push_back(entry);
  for (uint64_t entry : entries) release(entry, /*save=*/true);
}

// Answers the JSON handshakes still waiting for this robot's load with a refusal.
void RobotRegistry::refuse_waiting(RobotEntry& robot, int code, const std::string& why) {
  for (AttachDone& waiting : robot.waiting) {
    AttachResult refused;
    refused.code = code;
    refused.error = why;
    waiting(std::move(refused));
  }
  robot.waiting.clear();
}

// One recording per connection that drives a brain (--record); a takeover starts a new one.
void RobotRegistry::start_recording(RobotEntry& robot) {
  if (robot.recording) robot.recording->close();
  robot.recording.reset();
  if (!options_.recorder || !robot.slot || robot.view.id == 0) return;
  robot.recording =
      options_.recorder->open(robot.view.key, robot_key_hash(robot.view.key),
                              robot.view.sensory_dim, robot.view.motor_dim, robot.view.cycle);
}

// Saves (when asked and it has a brain) and frees one entry.
void RobotRegistry::release(uint64_t entry, bool save) {
  auto it = brains_.find(entry);
  if (it == brains_.end()) return;
  RobotEntry& robot = it->second;
  if (robot.view.id != 0) owners_.erase(robot.view.id);
  const std::string base = robot.base;
  bool final_save_queued = false;
  if (robot.slot) {
    if (save) final_save_queued = queue_save(robot, /*final_save=*/true);
    try {
      engine_.destroy(*robot.slot);
    } catch (const std::exception& e) {
      spdlog::error("{}: releasing the brain failed: {}", robot.view.key, e.what());
    }
    spdlog::info("{}: released after {} cycles in this session (brain cycle {})", robot.view.key,
                 robot.view.session_cycles, robot.view.cycle);
  }
  if (robot.recording) robot.recording->close();
  if (!robot.file.empty()) writer_.unpin(robot.file);
  brains_.erase(it);
  if (options_.fleet) {
    // The next server must load this brain's latest save: give the robot back to the fleet
    // only once that save is on disk (saved()), or now when there is none to wait for.
    if (final_save_queued) {
      release_after_save_[entry] = base;
    } else {
      fleet_release_if_unused(base);
    }
  }
}

void RobotRegistry::fleet_release_if_unused(const std::string& base) {
  if (!options_.fleet) return;
  const bool here = std::any_of(brains_.begin(), brains_.end(),
                                [&](const auto& e) { return e.second.base == base; });
  const bool saving = std::any_of(release_after_save_.begin(), release_after_save_.end(),
                                  [&](const auto& e) { return e.second == base; });
  if (!here && !saving) options_.fleet->release(base);
}

void RobotRegistry::fleet_lost(const std::vector<std::string>& identities) {
  std::vector<uint64_t> entries;
  for (const auto& [entry, robot] : brains_) {
    if (std::find(identities.begin(), identities.end(), robot.base) != identities.end()) {
      entries.push_back(entry);
    }
  }
  for (uint64_t entry : entries) {
    RobotEntry& robot = brains_.at(entry);
    spdlog::error("{}: this server no longer holds the robot in the fleet; closing it without "
                  "a save (its last save stands)",
                  robot.view.key);
    refuse_waiting(robot, kCodeSessionLimit, "this server lost the robot to the fleet");
    if (robot.on_taken_over && robot.view.id != 0) robot.on_taken_over();
    release(entry, /*save=*/false);
  }
}

void RobotRegistry::fleet_handover(const std::string& identity) {
  std::vector<uint64_t> entries;
  for (const auto& [entry, robot] : brains_) {
    if (robot.base == identity) entries.push_back(entry);
  }
  for (uint64_t entry : entries) {
    RobotEntry& robot = brains_.at(entry);
    spdlog::info("{}: another server of the fleet takes this robot over; saving and closing",
                 robot.view.key);
    refuse_waiting(robot, kCodeDuplicateSession, "another server of the fleet took the robot");
    if (robot.on_taken_over && robot.view.id != 0) robot.on_taken_over();
    release(entry, /*save=*/true);
  }
  if (entries.empty()) fleet_release_if_unused(identity);
}

std::vector<RobotView> RobotRegistry::robots() const {
  std::vector<RobotView> out;
  for (const auto& [entry, robot] : brains_) {
    if (robot.slot && robot.view.id != 0) out.push_back(robot.view);
  }
  return out;
}

const RobotView* RobotRegistry::robot_by_key(const std::string& key) const {
  for (const auto& [entry, robot] : brains_) {
    if (robot.slot && robot.view.id != 0 && robot.view.key == key) return &robot.view;
  }
  return nullptr;
}

BrainEngine::Slot RobotRegistry::slot_of(RobotId id) const {
  const RobotEntry& robot = brains_.at(owners_.at(id));
  if (!robot.slot) throw std::runtime_error(robot.view.key + ": brain still loading");
  return *robot.slot;
}

}  // namespace fieldbrain::server
