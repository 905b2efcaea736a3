#include "app/server/brain_worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "app/server/handshake.h"
#include "app/server/state_files.h"
#include "app/server/wall_clock.h"

namespace fieldbrain::server {
namespace {

// The robot must never receive a non-finite or out-of-range motor value (ef2bdb8 turned NaN
// into +1.0; we send 0, a safe stop).
float safe_motor(float v) {
  if (!std::isfinite(v)) return 0.0f;
  return std::clamp(v, -1.0f, 1.0f);
}

}  // namespace

BrainWorker::BrainWorker(BrainEngine& engine, WorkerOptions options, ServerStats& stats)
    : engine_(engine), options_(std::move(options)), stats_(stats) {}

BrainWorker::~BrainWorker() { stop(); }

void BrainWorker::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_) return;
  started_ = true;
  if (!options_.state_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.state_dir, ec);
    if (ec) spdlog::error("cannot create state dir {}: {}", options_.state_dir, ec.message());
  }
  thread_ = std::thread([this] { run(); });
}

void BrainWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      // fallthrough to join below if another caller raced us
    }
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
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

bool BrainWorker::attach(std::string base_key, std::string framing, int sensory_dim, int motor_dim,
                         AttachDone done) {
  return push(
      AttachJob{std::move(base_key), std::move(framing), sensory_dim, motor_dim, std::move(done)});
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
  // Shutdown: every robot still attached is saved once more and released.
  std::vector<RobotId> ids;
  for (const auto& [id, robot] : robots_) ids.push_back(id);
  for (RobotId id : ids) do_detach(id);
}

void BrainWorker::flush(std::vector<StepJob>& pending) {
  if (pending.empty()) return;
  // Group by (S, M): one brain call per group.
  std::map<std::pair<int, int>, std::vector<StepJob>> groups;
  for (StepJob& job : pending) {
    auto it = robots_.find(job.id);
    if (it == robots_.end()) {
      // The robot was detached while its frame was queued; the session is gone or closing.
      StepResult r;
      job.done(std::move(r));
      continue;
    }
    const auto& v = it->second.view;
    groups[{v.sensory_dim, v.motor_dim}].push_back(std::move(job));
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
    const Robot& robot = robots_.at(job.id);
    slots.push_back(robot.slot);
    sensors.insert(sensors.end(), job.sensors.begin(), job.sensors.end());
    rewards.push_back(job.reward);
  }
  const int m = robots_.at(group.front().id).view.motor_dim;
  std::vector<float> motors;
  bool ok = true;
  const auto t0 = std::chrono::steady_clock::now();
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
      stats_.error(kCodeBrainProcessing, robots_.at(job.id).view.key, e.what());
    }
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  brain_calls_.fetch_add(1);
  frames_stepped_.fetch_add(k);
  brain_us_.fetch_add(static_cast<uint64_t>(ms * 1000.0));

  for (size_t i = 0; i < k; ++i) {
    StepJob& job = group[i];
    Robot& robot = robots_.at(job.id);
    StepResult r;
    r.ok = ok;
    r.motors.assign(motors.begin() + i * m, motors.begin() + (i + 1) * m);
    for (float& v : r.motors) v = safe_motor(v);
    r.cycle = engine_.cycle(robot.slot);
    robot.view.cycle = r.cycle;
    robot.view.session_cycles += 1;
    robot.brain_ms_total += ms / k;
    robot.view.avg_cycle_ms = robot.brain_ms_total / robot.view.session_cycles;
    if (robot.recording) robot.recording->append(job.sensors, job.reward, r.motors);
    robot.view.last_sensors = std::move(job.sensors);
    robot.view.last_motors = r.motors;
    robot.view.last_reward = job.reward;
    robot.view.last_latency_ms = std::chrono::duration<double, std::milli>(
                                     std::chrono::steady_clock::now() - job.queued_at)
                                     .count();
    job.done(std::move(r));
    if (options_.save_every_cycles > 0 && robot.view.cycle > 0 &&
        robot.view.cycle % options_.save_every_cycles == 0) {
      save_robot(robot);
    }
    publish_if_wanted(robot);
  }
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
    line = engine_.telemetry(robot.slot);
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
  publish(v.cycle, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void BrainWorker::do_attach(AttachJob& job) {
  AttachResult result;
  std::string key = job.base_key;
  for (int n = 2; active_keys_.count(key); ++n) key = job.base_key + "#" + std::to_string(n);
  result.key = key;
  Robot robot;
  try {
    robot.slot = engine_.create(key, job.sensory_dim, job.motor_dim);
  } catch (const std::exception& e) {
    result.error = std::string("brain creation failed: ") + e.what();
    job.done(std::move(result));
    return;
  }
  robot.view.id = next_id_++;
  robot.view.key = key;
  robot.view.framing = job.framing;
  robot.view.sensory_dim = job.sensory_dim;
  robot.view.motor_dim = job.motor_dim;
  robot.view.connected_at = epoch_seconds();
  if (!options_.state_dir.empty()) {
    robot.state_path = state_path(options_.state_dir, key, engine_.state_extension());
    if (std::filesystem::exists(robot.state_path)) {
      try {
        engine_.load(robot.slot, robot.state_path);
        result.resumed = true;
        spdlog::info("{}: resumed from {} at cycle {}", key, robot.state_path,
                     engine_.cycle(robot.slot));
      } catch (const std::exception& e) {
        const std::string aside = move_aside(robot.state_path);
        stats_.error(kCodePersistenceLoad, key,
                     "saved state " + robot.state_path + " does not load (" + e.what() +
                         "); moved to " + (aside.empty() ? "<rename failed>" : aside) +
                         ", starting fresh");
      }
    }
  }
  robot.view.cycle = engine_.cycle(robot.slot);
  if (options_.recorder) {
    robot.recording = options_.recorder->open(key, robot_key_hash(key), job.sensory_dim,
                                              job.motor_dim, robot.view.cycle);
  }
  result.ok = true;
  result.id = robot.view.id;
  result.cycle = robot.view.cycle;
  active_keys_.insert(key);
  robots_.emplace(robot.view.id, std::move(robot));
  job.done(std::move(result));
}

void BrainWorker::do_detach(RobotId id) {
  auto it = robots_.find(id);
  if (it == robots_.end()) return;
  save_robot(it->second);
  if (it->second.recording) it->second.recording->close();
  try {
    engine_.destroy(it->second.slot);
  } catch (const std::exception& e) {
    spdlog::error("{}: releasing the brain failed: {}", it->second.view.key, e.what());
  }
  spdlog::info("{}: released after {} cycles in this session (brain cycle {})", it->second.view.key,
               it->second.view.session_cycles, it->second.view.cycle);
  active_keys_.erase(it->second.view.key);
  robots_.erase(it);
}

bool BrainWorker::save_robot(Robot& robot) {
  if (robot.state_path.empty()) return false;
  try {
    engine_.save(robot.slot, robot.state_path);
    saves_.fetch_add(1);
    spdlog::debug("{}: saved cycle {} to {}", robot.view.key, robot.view.cycle, robot.state_path);
    return true;
  } catch (const std::exception& e) {
    stats_.error(kCodePersistenceSave, robot.view.key, std::string("save failed: ") + e.what());
    return false;
  }
}

std::vector<RobotView> BrainWorker::robots() const {
  std::vector<RobotView> out;
  for (const auto& [id, robot] : robots_) out.push_back(robot.view);
  return out;
}

const RobotView* BrainWorker::robot_by_key(const std::string& key) const {
  for (const auto& [id, robot] : robots_) {
    if (robot.view.key == key) return &robot.view;
  }
  return nullptr;
}

BrainEngine::Slot BrainWorker::slot_of(RobotId id) const { return robots_.at(id).slot; }

nlohmann::json BrainWorker::save_all() {
  nlohmann::json saved = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::object();
  for (auto& [id, robot] : robots_) {
    if (robot.state_path.empty()) {
      failed[robot.view.key] = "persistence is off (no state_dir)";
    } else if (save_robot(robot)) {
      saved.push_back(robot.view.key);
    } else {
      failed[robot.view.key] = "save failed (see the server log)";
    }
  }
  return {{"saved", saved}, {"failed", failed}};
}

}  // namespace fieldbrain::server
