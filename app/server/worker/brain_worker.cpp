#include "app/server/worker/brain_worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "app/server/protocol/handshake.h"
#include "app/server/worker/state_files.h"
#include "app/server/protocol/wall_clock.h"
#include "app/version/version.h"

namespace fieldbrain::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The robot must never receive a non-finite or out-of-range motor value (ef2bdb8 turned NaN
// into +1.0; we send 0, a safe stop).
float safe_motor(float v) {
  if (!std::isfinite(v)) return 0.0f;
  return std::clamp(v, -1.0f, 1.0f);
}

// The monitor's `save` snapshots a robot at most this often: a snapshot still serialises on
// the brain thread (torch_brain_engine.cpp), ~1 s at R = 32 on a busy 2-core machine, so a
// storm of `save` requests may cost the ticks a few percent at most.
constexpr auto kMonitorSaveInterval = std::chrono::seconds(10);

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

}  // namespace

BrainWorker::BrainWorker(BrainEngine& engine, WorkerOptions options, ServerStats& stats)
    : engine_(engine),
      options_(std::move(options)),
      stats_(stats),
      writer_(options_.state_dir, options_.policy.state_dir_max_bytes, stats) {}

BrainWorker::~BrainWorker() { stop(); }

void BrainWorker::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_) return;
  if (!options_.state_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.state_dir, ec);
    if (ec) spdlog::error("cannot create state dir {}: {}", options_.state_dir, ec.message());
    // Interrupted atomic writes of a killed server (up to a whole save each).
    const int stale = remove_stale_temps(options_.state_dir);
    if (stale > 0)
      spdlog::info("removed {} stale temporary files from {}", stale, options_.state_dir);
    identities_.open(options_.state_dir);  // throws on a damaged file: fail at start-up
  }
  started_ = true;
  writer_.start();
  loader_.start();
  thread_ = std::thread([this] { run(); });
}

void BrainWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  loader_cancelled_ = true;  // loads not yet begun are not worth finishing
  if (thread_.joinable()) thread_.join();
  loader_.stop();
  writer_.stop();  // the final saves land before stop() returns
}

bool BrainWorker::push(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || !started_) return false;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

bool BrainWorker::attach(BrainClaim request, AttachDone done) {
  return push(AttachJob{std::move(request), std::move(done)});
}

bool BrainWorker::step(RobotId id, std::vector<float> sensors, float reward, StepDone done) {
  return push(
      StepJob{id, std::move(sensors), reward, std::move(done), std::chrono::steady_clock::now()});
}

bool BrainWorker::detach(RobotId id) { return push(DetachJob{id}); }

bool BrainWorker::query(Query fn) { return push(QueryJob{std::move(fn)}); }

void BrainWorker::set_publisher(Publish publish) {
  std::lock_guard<std::mutex> lock(publish_mutex_);
  publish_ = std::move(publish);
}

void BrainWorker::add_period(int64_t every_n) {
  std::lock_guard<std::mutex> lock(publish_mutex_);
  periods_.insert(std::max<int64_t>(1, every_n));
}

void BrainWorker::remove_period(int64_t every_n) {
  std::lock_guard<std::mutex> lock(publish_mutex_);
  auto it = periods_.find(std::max<int64_t>(1, every_n));
  if (it != periods_.end()) periods_.erase(it);
}

double BrainWorker::brain_seconds() const { return brain_us_.load() * 1e-6; }

void BrainWorker::run() {
  std::vector<StepJob> pending;
  for (;;) {
    std::deque<Job> jobs;
    bool stopping;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      jobs.swap(queue_);
      stopping = stopping_;
    }
    for (Job& job : jobs) {
      if (auto* s = std::get_if<StepJob>(&job)) {
        Robot* robot = owned(s->id);
        if (robot) {
          robot->in_flight = true;
          robot->last_active = SteadyClock::now();
        }
        if (robot && !robot->slot) {
          // The saved brain is still loading: a safe stop now keeps the lock-step pairing
          // (a late reply would be read as the answer to the next frame).
          StepResult r;
          r.ok = true;
          r.motors.assign(robot->view.motor_dim, 0.0f);
          robot->in_flight = false;
          s->done(std::move(r));
          continue;
        }
        // A robot is lock-step, but never let two frames of one robot share a batch.
        const bool dup = std::any_of(pending.begin(), pending.end(),
                                     [&](const StepJob& p) { return p.id == s->id; });
        if (dup) flush(pending);
        pending.push_back(std::move(*s));
        continue;
      }
      flush(pending);
      if (auto* a = std::get_if<AttachJob>(&job)) {
        do_attach(*a);
      } else if (auto* d = std::get_if<DetachJob>(&job)) {
        do_detach(d->id);
      } else if (auto* l = std::get_if<LoadedJob>(&job)) {
        do_loaded(*l);
      } else if (auto* saved = std::get_if<SavedJob>(&job)) {
        auto it = brains_.find(saved->entry);
        if (it != brains_.end()) --it->second.saving;
      } else if (auto* q = std::get_if<QueryJob>(&job)) {
        try {
          q->fn(*this);
        } catch (const std::exception& e) {
          spdlog::error("monitor query failed: {}", e.what());
        }
      }
    }
    flush(pending);
    if (stopping) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queue_.empty()) break;
    }
  }
  // Shutdown: every brain still held is saved once more and released.
  std::vector<uint64_t> entries;
  for (const auto& [entry, robot] : brains_) entries.push_back(entry);
  for (uint64_t entry : entries) release(entry, /*save=*/true);
}

BrainWorker::Robot* BrainWorker::owned(RobotId id) {
  auto it = owners_.find(id);
  if (it == owners_.end()) return nullptr;
  return &brains_.at(it->second);
}

void BrainWorker::flush(std::vector<StepJob>& pending) {
  if (pending.empty()) return;
  // Group by (S, M): one brain call per group.
  std::map<std::pair<int, int>, std::vector<StepJob>> groups;
  for (StepJob& job : pending) {
    Robot* robot = owned(job.id);
    if (!robot || !robot->slot) {
      // Released or taken over while its frame was queued; the session is gone or closing.
      StepResult r;
      job.done(std::move(r));
      continue;
    }
    groups[{robot->view.sensory_dim, robot->view.motor_dim}].push_back(std::move(job));
  }
  pending.clear();
  for (auto& [dims, group] : groups) run_group(group);
}

void BrainWorker::run_group(std::vector<StepJob>& group) {
  const size_t k = group.size();
  std::vector<BrainEngine::Slot> slots;
  std::vector<float> sensors, rewards;
  slots.reserve(k);
  rewards.reserve(k);
  for (const StepJob& job : group) {
    slots.push_back(*owned(job.id)->slot);
    sensors.insert(sensors.end(), job.sensors.begin(), job.sensors.end());
    rewards.push_back(job.reward);
  }
  const int m = owned(group.front().id)->view.motor_dim;
  std::vector<float> motors;
  bool ok = true;
  const auto t0 = SteadyClock::now();
  try {
    motors = engine_.step_group(slots, sensors, rewards);
    if (motors.size() != k * static_cast<size_t>(m)) {
      throw std::runtime_error("brain returned " + std::to_string(motors.size()) +
                               " motor values for " + std::to_string(k) + " robots x " +
                               std::to_string(m));
    }
  } catch (const std::exception& e) {
    ok = false;
    motors.assign(k * m, 0.0f);
    for (const StepJob& job : group) {
      stats_.error(kCodeBrainProcessing, owned(job.id)->view.key, e.what());
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
  brain_calls_.fetch_add(1);
  frames_stepped_.fetch_add(k);
  brain_us_.fetch_add(static_cast<uint64_t>(ms * 1000.0));

  for (size_t i = 0; i < k; ++i) {
    StepJob& job = group[i];
    Robot& robot = *owned(job.id);
    StepResult r;
    r.ok = ok;
    r.motors.assign(motors.begin() + i * m, motors.begin() + (i + 1) * m);
    for (float& v : r.motors) v = safe_motor(v);
    r.cycle = engine_.cycle(*robot.slot);
    robot.view.cycle = r.cycle;
    robot.view.session_cycles += 1;
    robot.brain_ms_total += ms / k;
    robot.view.avg_cycle_ms = robot.brain_ms_total / robot.view.session_cycles;
    if (robot.recording) robot.recording->append(job.sensors, job.reward, r.motors);
    robot.view.last_sensors = std::move(job.sensors);
    robot.view.last_motors = r.motors;
    robot.view.last_reward = job.reward;
    robot.view.last_latency_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - job.queued_at)
            .count();
    stats_.reply_latency().record(robot.view.last_latency_ms / 1000.0);
    watch_latency(robot);
    robot.in_flight = false;
    robot.last_active = SteadyClock::now();
    job.done(std::move(r));
    if (options_.save_every_cycles > 0 && robot.view.cycle > 0 &&
        robot.view.cycle % options_.save_every_cycles == 0) {
      queue_save(robot, /*final_save=*/false);
    }
    publish_if_wanted(robot);
  }
}

void BrainWorker::watch_latency(Robot& robot) {
  RobotView& v = robot.view;
  if (robot.latency.observe(v.last_latency_ms, SteadyClock::now())) {
    const int64_t resolution = engine_.describe().value("resolution", int64_t{0});
    spdlog::warn("{}", slow_robot_warning(v.key, robot.latency, resolution, owners_.size()));
  }
  v.loop_budget_ms = robot.latency.budget_ms();
  v.latency_smoothed_ms = robot.latency.smoothed_ms();
  v.over_budget = robot.latency.over_budget();
}

void BrainWorker::publish_if_wanted(Robot& robot) {
  Publish publish;
  {
    std::lock_guard<std::mutex> lock(publish_mutex_);
    if (!publish_ || periods_.empty()) return;
    bool wanted = false;
    for (int64_t n : periods_) {
      if (robot.view.cycle % n == 0) {
        wanted = true;
        break;
      }
    }
    if (!wanted) return;
    publish = publish_;
  }
  nlohmann::json line;
  try {
    line = engine_.telemetry(*robot.slot);
    if (!line.is_object()) line = {{"brain", line}};
  } catch (const std::exception& e) {
    line = {{"telemetry_error", e.what()}};
  }
  const auto& v = robot.view;
  line["robot_id"] = v.key;
  line["cycles"] = v.cycle;
  line["timestamp"] = epoch_seconds();
  line["uptime"] = stats_.uptime_s();
  line["avg_cycle_ms"] = v.avg_cycle_ms;
  const size_t ns = std::min<size_t>(16, v.last_sensors.size());
  line["sensors"] = std::vector<float>(v.last_sensors.begin(), v.last_sensors.begin() + ns);
  line["motors"] = v.last_motors;
  line["reward"] = v.last_reward;
  line["latency_ms"] = v.last_latency_ms;
  line["server_version"] = fieldbrain::version();
  line["latency_smoothed_ms"] = v.latency_smoothed_ms;
  line["loop_budget_ms"] = v.loop_budget_ms;
  line["over_budget"] = v.over_budget;
  publish(v.cycle, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string BrainWorker::display_key(const BrainClaim& request) const {
  if (request.json) return request.key;
  const auto& policy = options_.policy;
  auto named = policy.address_names.find(request.peer_address);
  if (named != policy.address_names.end()) return request.key + "@" + named->second;
  if (policy.binary_key == "address") return request.key + "@" + request.peer_address;
  return request.key;
}

// A brain of this identity that a new handshake may take: one still loading (a client that
// gave up waiting and retried), one whose connection is gone, or one whose connection has
// been silent for takeover_after_s (a robot whose WiFi dropped and that came back).
BrainWorker::Robot* BrainWorker::takeover_candidate(const std::string& base) {
  for (auto& [entry, robot] : brains_) {
    if (robot.base != base) continue;
    if (!robot.slot || robot.view.id == 0) return &robot;
    if (!robot.in_flight && seconds_since(robot.last_active) >= options_.policy.takeover_after_s) {
      return &robot;
    }
  }
  return nullptr;
}

void BrainWorker::answer(Robot& robot, AttachDone done, AttachResult result) {
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

void BrainWorker::hand_over(Robot& robot, AttachJob& job, AttachResult result) {
  const double silent = seconds_since(robot.last_active);
  if (robot.view.id != 0) {
    owners_.erase(robot.view.id);
    if (robot.on_taken_over) robot.on_taken_over();
  }
  refuse_waiting(robot, kCodeDuplicateSession, "a newer handshake for this robot took its brain");
  spdlog::info("{}: brain taken over by a new connection from {} (the previous one {})",
               robot.view.key, job.request.peer_address,
               robot.view.id == 0 ? std::string("had gone")
               : !robot.slot      ? std::string("was still waiting for the load")
                                  : fmt::format("was silent for {:.1f} s", silent));
  robot.view.id = next_id_++;
  owners_[robot.view.id] = robot.entry_number;
  robot.view.framing = job.request.framing;
  robot.peer_address = job.request.peer_address;
  robot.view.connected_at = epoch_seconds();
  robot.view.session_cycles = 0;
  robot.brain_ms_total = 0;
  robot.on_taken_over = std::move(job.request.on_taken_over);
  robot.last_active = SteadyClock::now();
  robot.in_flight = false;
  start_recording(robot);
  result.resumed = true;
  answer(robot, std::move(job.done), std::move(result));
}

void BrainWorker::do_attach(AttachJob& job) {
  const BrainClaim& req = job.request;
  AttachResult result;
  auto refuse = [&](int code, std::string why) {
    result.code = code;
    result.error = std::move(why);
    job.done(std::move(result));
  };
  IdentityClaim claim;
  claim.json = req.json;
  claim.key = display_key(req);
  claim.sensory_dim = req.sensory_dim;
  claim.motor_dim = req.motor_dim;
  claim.token = req.token;
  const std::string base = identity_of(claim);
  Robot* taken = takeover_candidate(base);
  const bool in_use = std::any_of(brains_.begin(), brains_.end(),
                                  [&](const auto& e) { return e.second.base == base; });
  // A new brain (fresh, resumed or a twin) must fit under the cap; a takeover needs none.
  const bool needs_brain = !taken && !(in_use && req.json);
  if (needs_brain && brains_.size() >= static_cast<size_t>(options_.policy.max_live_brains)) {
    return refuse(kCodeSessionLimit, "the server holds its limit of " +
                                         std::to_string(options_.policy.max_live_brains) +
                                         " live brains (robots.max_live_brains); try again later");
  }
  // One address may not take every slot (issue 24 item 4): its own, smaller cap.
  const int per_address = options_.policy.live_brains_per_address();
  if (needs_brain &&
      std::count_if(brains_.begin(), brains_.end(), [&](const auto& e) {
        return e.second.peer_address == req.peer_address;
      }) >= per_address) {
    return refuse(kCodeSessionLimit, "address " + req.peer_address + " holds its limit of " +
                                         std::to_string(per_address) +
                                         " live brains (robots.max_live_brains_per_address); "
                                         "try again later");
  }
  // Checked before anything is taken over or created: a refused claim changes nothing.
  std::optional<IdentityRecord> before;
  if (const IdentityRecord* r = identities_.find(base)) before = *r;
  IdentityDecision decision = decide_identity(identities_, options_.policy, claim);
  if (!decision.ok) return refuse(decision.code, decision.error);
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
  result.token = decision.issued_token;
  if (taken) return hand_over(*taken, job, std::move(result));
  if (in_use && req.json) {
    return refuse(kCodeDuplicateSession,
                  "robot_id '" + claim.key +
                      "' is in use by a connection that is cycling; a new "
                      "handshake takes it over once that one has been silent for " +
                      fmt::format("{:g}", options_.policy.takeover_after_s) + " s");
  }
  // Binary robots that really share a key while both cycle: a twin "#2", "#3", ...
  std::string key = claim.key, identity = base;
  for (int n = 2; std::any_of(brains_.begin(), brains_.end(),
                              [&](const auto& e) { return e.second.identity == identity; });
       ++n) {
    key = claim.key + "#" + std::to_string(n);
    identity = base + "#" + std::to_string(n);
  }
  const uint64_t entry = next_entry_++;
  Robot robot;
  robot.entry_number = entry;
  robot.base = base;
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
    const bool posted = loader_.post([this, entry, key, s = req.sensory_dim, m = req.motor_dim,
                                      path = robot.load_path, file = robot.file] {
      LoadedJob loaded{entry, nullptr, "", false};
      if (loader_cancelled_) return;
      writer_.wait_written(file);
      if (!std::filesystem::exists(path)) {
        loaded.missing = true;  // that last write failed: start fresh
      } else {
        try {
          loaded.brain = engine_.load_detached(key, s, m, path);
        } catch (const std::exception& e) {
          loaded.error = e.what();
        }
      }
      push(std::move(loaded));
    });
    if (!posted) return refuse(kCodeInvalidCapabilities, "server shutting down");
  }
  robot.view.id = next_id_++;
  owners_[robot.view.id] = entry;
  if (!robot.file.empty()) writer_.pin(robot.file);
  Robot& placed = brains_.emplace(entry, std::move(robot)).first->second;
  start_recording(placed);
  result.resumed = !placed.load_path.empty();
  answer(placed, std::move(job.done), std::move(result));
}

void BrainWorker::do_loaded(LoadedJob& job) {
  auto it = brains_.find(job.entry);
  if (it == brains_.end()) return;
  Robot& robot = it->second;
  if (job.brain) {
    try {
      robot.slot = engine_.adopt(std::move(job.brain));
      spdlog::info("{}: resumed from {} at cycle {}", robot.view.key, robot.load_path,
                   engine_.cycle(*robot.slot));
    } catch (const std::exception& e) {
      job.error = e.what();
    }
  }
  if (!robot.slot && job.missing) {
    robot.load_path.clear();
    try {
      robot.slot = engine_.create(robot.view.key, robot.view.sensory_dim, robot.view.motor_dim);
    } catch (const std::exception& e) {
      job.error = e.what();
    }
  }
  if (!robot.slot && !job.missing) {
    std::string fate;
    if (robot.legacy_file) {
      fate = "left in place";  // an older release's file: never ours to move
    } else {
      const std::string aside = move_aside(robot.load_path);
      fate = "moved to " + (aside.empty() ? std::string("<rename failed>") : aside);
    }
    stats_.error(kCodePersistenceLoad, robot.view.key,
                 "saved state " + robot.load_path + " does not load (" + job.error + "); " + fate +
                     ", starting fresh");
    robot.load_path.clear();  // a fresh brain: the handshake reply and log must not say resumed
    try {
      robot.slot = engine_.create(robot.view.key, robot.view.sensory_dim, robot.view.motor_dim);
    } catch (const std::exception& e) {
      job.error = e.what();
    }
  }
  if (!robot.slot) {
    refuse_waiting(robot, kCodeInvalidCapabilities, "brain creation failed: " + job.error);
    release(job.entry, /*save=*/false);
    return;
  }
  robot.view.cycle = engine_.cycle(*robot.slot);
  if (robot.view.id == 0) {
    // Every connection that wanted it left while it loaded: the save on disk is current.
    release(job.entry, /*save=*/false);
    return;
  }
  start_recording(robot);
  for (AttachDone& waiting : robot.waiting) {
    AttachResult r;
    r.ok = true;
    r.id = robot.view.id;
    r.key = robot.view.key;
    r.cycle = robot.view.cycle;
    r.resumed = !robot.load_path.empty();
    waiting(std::move(r));
  }
  robot.waiting.clear();
}

void BrainWorker::do_detach(RobotId id) {
  auto owner = owners_.find(id);
  if (owner == owners_.end()) return;  // taken over, or already released
  const uint64_t entry = owner->second;
  owners_.erase(owner);
  Robot& robot = brains_.at(entry);
  robot.view.id = 0;
  refuse_waiting(robot, kCodeConnectionTimeout,
                 "the connection closed while the brain was loading");
  // A brain still loading stays (unowned) so that a retried handshake joins the same load.
  if (robot.slot) release(entry, /*save=*/true);
}

// Answers the JSON handshakes still waiting for this robot's load with a refusal.
void BrainWorker::refuse_waiting(Robot& robot, int code, const std::string& why) {
  for (AttachDone& waiting : robot.waiting) {
    AttachResult refused;
    refused.code = code;
    refused.error = why;
    waiting(std::move(refused));
  }
  robot.waiting.clear();
}

// One recording per connection that drives a brain (--record); a takeover starts a new one.
void BrainWorker::start_recording(Robot& robot) {
  if (robot.recording) robot.recording->close();
  robot.recording.reset();
  if (!options_.recorder || !robot.slot || robot.view.id == 0) return;
  robot.recording =
      options_.recorder->open(robot.view.key, robot_key_hash(robot.view.key),
                              robot.view.sensory_dim, robot.view.motor_dim, robot.view.cycle);
}

// Saves (when asked and it has a brain) and frees one entry.
void BrainWorker::release(uint64_t entry, bool save) {
  auto it = brains_.find(entry);
  if (it == brains_.end()) return;
  Robot& robot = it->second;
  if (robot.view.id != 0) owners_.erase(robot.view.id);
  if (robot.slot) {
    if (save) queue_save(robot, /*final_save=*/true);
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
}

bool BrainWorker::queue_save(Robot& robot, bool final_save) {
  if (robot.file.empty() || !robot.slot) return false;
  try {
    const auto t0 = SteadyClock::now();
    BrainEngine::StateWriterFn snapshot = engine_.snapshot(*robot.slot);
    robot.last_snapshot = SteadyClock::now();
    ++robot.saving;
    const uint64_t entry = robot.entry_number;
    writer_.write(robot.file, robot.view.key, std::move(snapshot), final_save,
                  [this, entry] { push(SavedJob{entry}); }, robot.view.cycle);
    spdlog::debug("{}: snapshot of cycle {} taken in {:.1f} ms on the brain thread", robot.view.key,
                  robot.view.cycle,
                  std::chrono::duration<double, std::milli>(robot.last_snapshot - t0).count());
    return true;
  } catch (const std::exception& e) {
    stats_.error(kCodePersistenceSave, robot.view.key,
                 std::string("snapshot for a save failed: ") + e.what());
    if (final_save) writer_.mark_unsaved(robot.view.key);
    return false;
  }
}

std::vector<RobotView> BrainWorker::robots() const {
  std::vector<RobotView> out;
  for (const auto& [entry, robot] : brains_) {
    if (robot.slot && robot.view.id != 0) out.push_back(robot.view);
  }
  return out;
}

const RobotView* BrainWorker::robot_by_key(const std::string& key) const {
  for (const auto& [entry, robot] : brains_) {
    if (robot.slot && robot.view.id != 0 && robot.view.key == key) return &robot.view;
  }
  return nullptr;
}

BrainEngine::Slot BrainWorker::slot_of(RobotId id) const {
  const Robot& robot = brains_.at(owners_.at(id));
  if (!robot.slot) throw std::runtime_error(robot.view.key + ": brain still loading");
  return *robot.slot;
}

nlohmann::json BrainWorker::save_all() {
  nlohmann::json saved = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::object();
  nlohmann::json failed = nlohmann::json::object();
  for (auto& [entry, robot] : brains_) {
    if (!robot.slot || robot.view.id == 0) continue;
    const std::string& key = robot.view.key;
    if (robot.file.empty()) {
      failed[key] = "persistence is off (no state_dir)";
    } else if (robot.saving > 0 || writer_.pending(robot.file)) {
      skipped[key] = "its previous save is still being written";
    } else if (SteadyClock::now() - robot.last_snapshot < kMonitorSaveInterval) {
      skipped[key] = "saved less than 10 s ago";
    } else if (queue_save(robot, /*final_save=*/false)) {
      saved.push_back(key);
    } else {
      failed[key] = "snapshot failed (see the server log)";
    }
  }
  return {{"saved", saved}, {"skipped", skipped}, {"failed", failed}};
}

}  // namespace fieldbrain::server
