#include "app/server/worker/brain_worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "app/server/worker/fleet_membership.h"
#include "app/server/protocol/handshake.h"

namespace fieldbrain::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The robot must never receive a non-finite or out-of-range motor value (ef2bdb8 turned NaN
// into +1.0; we send 0, a safe stop).
float safe_motor(float v) {
  if (!std::isfinite(v)) return 0.0f;
  return std::clamp(v, -1.0f, 1.0f);
}

}  // namespace

BrainWorker::BrainWorker(BrainEngine& engine, WorkerOptions options, ServerStats& stats)
    : engine_(engine),
      options_(std::move(options)),
      stats_(stats),
      robots_(engine, options_, stats,
              RobotRegistry::Callbacks{
                  [this](LoadedBrain loaded) { push(std::move(loaded)); },
                  [this](uint64_t entry) { push(SavedJob{entry}); },
                  [this](BrainClaim claim, AttachDone done) {
                    if (!attach(std::move(claim), done)) {
                      AttachResult stopping;
                      stopping.code = kCodeSessionLimit;
                      stopping.error = "the server is stopping";
                      done(std::move(stopping));
                    }
                  }}),
      drops_rewards_(engine.describe().value("legacy_reward", std::string()) == "drop") {}

BrainWorker::~BrainWorker() { stop(); }

void BrainWorker::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_) return;
  robots_.start();  // throws on a damaged identity file: fail at start-up
  if (options_.fleet) {
    // The fleet's events arrive on its own thread; the robots are this thread's.
    options_.fleet->set_handlers(
        [this](const std::vector<std::string>& identities) {
          query([identities](BrainWorker& w) { w.robots_.fleet_lost(identities); });
        },
        [this](const std::string& identity) {
          query([identity](BrainWorker& w) { w.robots_.fleet_handover(identity); });
        });
  }
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void BrainWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  robots_.cancel_loads();
  if (options_.fleet) options_.fleet->set_handlers(nullptr, nullptr);
  if (thread_.joinable()) thread_.join();
  robots_.stop_threads();  // the final saves land before stop() returns
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
  return push(StepJob{id, std::move(sensors), reward, std::move(done), SteadyClock::now()});
}

bool BrainWorker::detach(RobotId id) { return push(DetachJob{id}); }

bool BrainWorker::query(Query fn) { return push(QueryJob{std::move(fn)}); }

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
        RobotEntry* robot = robots_.owned(s->id);
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
        robots_.attach(std::move(a->request), std::move(a->done));
      } else if (auto* d = std::get_if<DetachJob>(&job)) {
        robots_.detach(d->id);
      } else if (auto* l = std::get_if<LoadedBrain>(&job)) {
        robots_.loaded(*l);
      } else if (auto* saved = std::get_if<SavedJob>(&job)) {
        robots_.saved(saved->entry);
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
  robots_.release_all();
}

void BrainWorker::flush(std::vector<StepJob>& pending) {
  if (pending.empty()) return;
  // Group by (S, M): one brain call per group.
  std::map<std::pair<int, int>, std::vector<StepJob>> groups;
  for (StepJob& job : pending) {
    RobotEntry* robot = robots_.owned(job.id);
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
  // The group's inputs and motors in vectors kept across ticks (cleared, never shrunk).
  std::vector<BrainEngine::Slot>& slots = tick_slots_;
  std::vector<float>& sensors = tick_sensors_;
  std::vector<float>& rewards = tick_rewards_;
  std::vector<float>& motors = tick_motors_;
  slots.clear();
  sensors.clear();
  rewards.clear();
  for (const StepJob& job : group) {
    slots.push_back(*robots_.owned(job.id)->slot);
    sensors.insert(sensors.end(), job.sensors.begin(), job.sensors.end());
    rewards.push_back(job.reward);
  }
  const int m = robots_.owned(group.front().id)->view.motor_dim;
  bool ok = true;
  const auto t0 = SteadyClock::now();
  try {
    engine_.step_group_into(slots, sensors, rewards, motors);
    if (motors.size() != k * static_cast<size_t>(m)) {
      throw std::runtime_error("brain returned " + std::to_string(motors.size()) +
                               " motor values for " + std::to_string(k) + " robots x " +
                               std::to_string(m));
    }
  } catch (const std::exception& e) {
    ok = false;
    motors.assign(k * m, 0.0f);
    for (const StepJob& job : group) {
      stats_.error(kCodeBrainProcessing, robots_.owned(job.id)->view.key, e.what());
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
  brain_calls_.fetch_add(1);
  frames_stepped_.fetch_add(k);
  brain_us_.fetch_add(static_cast<uint64_t>(ms * 1000.0));

  for (size_t i = 0; i < k; ++i) {
    StepJob& job = group[i];
    RobotEntry& robot = *robots_.owned(job.id);
    StepResult r;
    r.ok = ok;
    r.motors.assign(motors.begin() + i * m, motors.begin() + (i + 1) * m);
    // NaN motors from a brain that stepped: its state stopped being finite in this cycle
    // (brain_engine.h). It is replaced now, before any save of it can be queued.
    const auto finite = [](float v) { return std::isfinite(v); };
    if (ok && !std::all_of(r.motors.begin(), r.motors.end(), finite)) {
      const int64_t cycle = engine_.cycle(*robot.slot);
      r.code = kCodeBrainStateNotFinite;
      r.error = robots_.restore_poisoned(robot, cycle);
      r.motors.assign(static_cast<size_t>(m), 0.0f);
      r.cycle = cycle;
      robot.in_flight = false;
      robot.last_active = SteadyClock::now();
      job.done(std::move(r));
      continue;
    }
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
        std::chrono::duration<double, std::milli>(SteadyClock::now() - job.queued_at).count();
    stats_.reply_latency().record(robot.view.last_latency_ms / 1000.0);
    if (drops_rewards_ && job.reward != 0.0f) stats_.reward_dropped(robot.view.key);
    watch_latency(robot);
    report_rate(robot);
    robot.in_flight = false;
    robot.last_active = SteadyClock::now();
    job.done(std::move(r));
    robots_.after_step(robot);
    publisher_.publish_if_wanted(engine_, stats_, robot);
  }
}

void BrainWorker::report_rate(RobotEntry& robot) {
  if (!robot.rate_log.observe(robot.view.last_latency_ms, SteadyClock::now(),
                              options_.robot_report_interval)) {
    return;
  }
  if (stats_.may_log("robot rate")) {
    spdlog::info("{}", robot_rate_line(robot.view.key, robot.rate_log.last_window()));
  }
}

void BrainWorker::watch_latency(RobotEntry& robot) {
  RobotView& v = robot.view;
  if (robot.latency.observe(v.last_latency_ms, SteadyClock::now())) {
    spdlog::warn("{}", slow_robot_warning(v.key, robot.latency,
                                          SpeedAdvice::for_brain(engine_.describe()),
                                          robots_.connections()));
  }
  v.loop_budget_ms = robot.latency.budget_ms();
  v.latency_smoothed_ms = robot.latency.smoothed_ms();
  v.over_budget = robot.latency.over_budget();
}

}  // namespace fieldbrain::server
