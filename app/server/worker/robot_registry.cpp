#include "app/server/worker/robot_registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "app/server/protocol/handshake.h"
#include "app/server/protocol/wall_clock.h"

namespace fieldbrain::server {
namespace {

double seconds_silent(const RobotEntry& robot) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - robot.last_active)
      .count();
}

AttachResult refusal(AttachResult result, int code, std::string why) {
  result.code = code;
  result.error = std::move(why);
  return result;
}

}  // namespace

RobotRegistry::RobotRegistry(BrainEngine& engine, const WorkerOptions& options, ServerStats& stats,
                             Callbacks callbacks)
    : engine_(engine),
      options_(options),
      admission_(options, stats, robots_),
      fleet_(options.fleet, robots_, std::move(callbacks.requeue_attach)),
      storage_(engine, options, stats,
               RobotStorage::Callbacks{std::move(callbacks.loaded), std::move(callbacks.saved)},
               [this](const std::string& base) { return fleet_.may_save(base); }) {}

void RobotRegistry::start() {
  storage_.prepare_state_dir();
  admission_.open_identities();  // throws on a damaged file: fail at start-up
  storage_.start_threads();
}

void RobotRegistry::attach(BrainClaim claim, AttachDone done) {
  AttachResult result;
  const IdentityClaim identity = admission_.identity_claim(claim);
  int code = 0;
  std::string why;
  switch (fleet_.before_admission(claim, identity, code, why)) {
    case FleetHandover::Next::kRefuse:
      return done(refusal(std::move(result), code, std::move(why)));
    case FleetHandover::Next::kAskFleet: {
      // Fleet mode: the fleet decides first (tokens, which server runs the robot), off this
      // thread, since it may wait for another server to hand the robot over.
      const RobotAdmission::Decision quota = admission_.check_quotas(claim, identity);
      if (quota.code != 0) return done(refusal(std::move(result), quota.code, quota.error));
      return fleet_.ask(std::move(claim), identity, std::move(done));
    }
    case FleetHandover::Next::kAdmit:
      break;
  }
  const RobotAdmission::Decision admission = admission_.admit(claim, identity);
  result.token = admission.token;
  if (admission.code != 0) {
    if (claim.fleet_admission) fleet_.release_if_unused(admission.base);
    return done(refusal(std::move(result), admission.code, admission.error));
  }
  if (admission.takeover) {
    return hand_over(*admission.takeover, claim, std::move(done), std::move(result));
  }
  place_new(claim, admission, std::move(done), std::move(result));
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
  const double silent = seconds_silent(robot);
  if (robot.view.id != 0) {
    robots_.disconnect(robot);
    if (robot.on_taken_over) robot.on_taken_over();
  }
  refuse_waiting(robot, kCodeDuplicateSession, "a newer handshake for this robot took its brain");
  spdlog::info("{}: brain taken over by a new connection from {} (the previous one {})",
               robot.view.key, claim.peer_address,
               robot.view.id == 0 ? std::string("had gone")
               : !robot.slot      ? std::string("was still waiting for the load")
                                  : fmt::format("was silent for {:.1f} s", silent));
  robots_.connect(robot);
  robot.view.framing = claim.framing;
  robot.peer_address = claim.peer_address;
  robot.view.connected_at = epoch_seconds();
  robot.view.session_cycles = 0;
  robot.brain_ms_total = 0;
  robot.on_taken_over = std::move(claim.on_taken_over);
  robot.last_active = std::chrono::steady_clock::now();
  robot.in_flight = false;
  storage_.start_recording(robot);
  result.resumed = true;
  answer(robot, std::move(done), std::move(result));
}

void RobotRegistry::place_new(BrainClaim& claim, const RobotAdmission::Decision& admission,
                              AttachDone done, AttachResult result) {
  const WireHandshake& hs = claim.handshake;
  // Binary robots that really share a key while both cycle: a twin "#2", "#3", ...
  std::string key = admission.key, identity = admission.base;
  for (int n = 2; robots_.any([&](const RobotEntry& r) { return r.identity == identity; }); ++n) {
    key = admission.key + "#" + std::to_string(n);
    identity = admission.base + "#" + std::to_string(n);
  }
  RobotEntry robot;
  robot.entry_number = robots_.next_entry_number();
  robot.base = admission.base;
  robot.identity = identity;
  robot.json = hs.json_namespace;
  robot.latency =
      hs.json_namespace
          ? LatencyWatch(options_.policy.json_loop_budget_ms, "robots.json_loop_budget_ms")
          : LatencyWatch(options_.policy.loop_budget_ms, "robots.loop_budget_ms");
  robot.view.key = key;
  robot.peer_address = claim.peer_address;
  robot.view.framing = claim.framing;
  robot.view.sensory_dim = hs.sensory_dim;
  robot.view.motor_dim = hs.motor_dim;
  robot.view.connected_at = epoch_seconds();
  robot.on_taken_over = claim.on_taken_over;
  robot.last_active = std::chrono::steady_clock::now();
  storage_.locate_save(robot);
  if (robot.load_path.empty()) {
    try {
      robot.slot = engine_.create(key, hs.sensory_dim, hs.motor_dim);
    } catch (const std::exception& e) {
      return done(refusal(std::move(result), kCodeInvalidCapabilities,
                          std::string("brain creation failed: ") + e.what()));
    }
    robot.view.cycle = engine_.cycle(*robot.slot);
  } else if (!storage_.post_load(robot)) {
    return done(refusal(std::move(result), kCodeInvalidCapabilities, "server shutting down"));
  }
  robots_.connect(robot);
  storage_.pin_save(robot);
  RobotEntry& placed = robots_.insert(std::move(robot));
  storage_.start_recording(placed);
  result.resumed = !placed.load_path.empty();
  answer(placed, std::move(done), std::move(result));
}

void RobotRegistry::loaded(LoadedBrain& job) {
  RobotEntry* robot = robots_.find(job.entry);
  if (!robot) return;
  const RobotStorage::LoadOutcome outcome = storage_.take_loaded(*robot, job);
  if (outcome.code != 0) {
    refuse_waiting(*robot, outcome.code, outcome.why);
    release(job.entry, /*save=*/false);
    return;
  }
  robot->view.cycle = engine_.cycle(*robot->slot);
  if (robot->view.id == 0) {
    // Every connection that wanted it left while it loaded: the save on disk is current.
    release(job.entry, /*save=*/false);
    return;
  }
  storage_.start_recording(*robot);
  for (AttachDone& waiting : robot->waiting) {
    AttachResult r;
    r.ok = true;
    r.id = robot->view.id;
    r.key = robot->view.key;
    r.cycle = robot->view.cycle;
    r.resumed = !robot->load_path.empty();
    waiting(std::move(r));
  }
  robot->waiting.clear();
}

void RobotRegistry::saved(uint64_t entry) {
  storage_.saved(robots_.find(entry));
  fleet_.saved(entry);
}

void RobotRegistry::detach(RobotId id) {
  RobotEntry* robot = robots_.owned(id);
  if (!robot) return;  // taken over, or already released
  robots_.disconnect(*robot);
  robot->view.id = 0;
  refuse_waiting(*robot, kCodeConnectionTimeout,
                 "the connection closed while the brain was loading");
  // A brain still loading stays (unowned) so that a retried handshake joins the same load.
  if (robot->slot) release(robot->entry_number, /*save=*/true);
}

void RobotRegistry::release_all() {
  for (uint64_t entry : robots_.entries_where([](const RobotEntry&) { return true; })) {
    release(entry, /*save=*/true);
  }
}

// Answers the JSON handshakes still waiting for this robot's load with a refusal.
void RobotRegistry::refuse_waiting(RobotEntry& robot, int code, const std::string& why) {
  for (AttachDone& waiting : robot.waiting) waiting(refusal(AttachResult{}, code, why));
  robot.waiting.clear();
}

void RobotRegistry::release(uint64_t entry, bool save) {
  RobotEntry* robot = robots_.find(entry);
  if (!robot) return;
  robots_.disconnect(*robot);
  const std::string base = robot->base;
  bool final_save_queued = false;
  if (robot->slot) {
    if (save) final_save_queued = storage_.queue_save(*robot, /*final_save=*/true);
    try {
      engine_.destroy(*robot->slot);
    } catch (const std::exception& e) {
      spdlog::error("{}: releasing the brain failed: {}", robot->view.key, e.what());
    }
    spdlog::info("{}: released after {} cycles in this session (brain cycle {})", robot->view.key,
                 robot->view.session_cycles, robot->view.cycle);
  }
  storage_.let_go(*robot);
  robots_.erase(entry);
  fleet_.released(entry, base, final_save_queued);
}

void RobotRegistry::close_for_fleet(uint64_t entry, int code, const std::string& why, bool save) {
  RobotEntry* robot = robots_.find(entry);
  if (!robot) return;
  refuse_waiting(*robot, code, why);
  if (robot->on_taken_over && robot->view.id != 0) robot->on_taken_over();
  release(entry, save);
}

void RobotRegistry::fleet_lost(const std::vector<std::string>& identities) {
  fleet_.lost(identities, [this](uint64_t entry, int code, const std::string& why, bool save) {
    close_for_fleet(entry, code, why, save);
  });
}

void RobotRegistry::fleet_handover(const std::string& identity) {
  fleet_.handover(identity, [this](uint64_t entry, int code, const std::string& why, bool save) {
    close_for_fleet(entry, code, why, save);
  });
}

}  // namespace fieldbrain::server
