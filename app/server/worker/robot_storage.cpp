#include "app/server/worker/robot_storage.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "app/server/protocol/handshake.h"
#include "app/server/worker/state_files.h"

namespace fieldbrain::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The monitor's `save` snapshots a robot at most this often: a snapshot still serialises on
// the brain thread (torch_brain_engine.cpp), ~1 s at R = 32 on a busy 2-core machine, so a
// storm of `save` requests may cost the ticks a few percent at most.
constexpr auto kMonitorSaveInterval = std::chrono::seconds(10);

}  // namespace

RobotStorage::RobotStorage(BrainEngine& engine, const WorkerOptions& options, ServerStats& stats,
                           Callbacks callbacks, MaySave may_save)
    : engine_(engine),
      options_(options),
      stats_(stats),
      callbacks_(std::move(callbacks)),
      may_save_(std::move(may_save)),
      writer_(options_.state_dir, options_.policy.state_dir_max_bytes, stats) {}

void RobotStorage::prepare_state_dir() {
  if (options_.state_dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  if (ec) spdlog::error("cannot create state dir {}: {}", options_.state_dir, ec.message());
  // Interrupted atomic writes of a killed server (up to a whole save each).
  const int stale = remove_stale_temps(options_.state_dir);
  if (stale > 0)
    spdlog::info("removed {} stale temporary files from {}", stale, options_.state_dir);
}

void RobotStorage::start_threads() {
  writer_.start();
  loader_.start();
}

void RobotStorage::stop_threads() {
  loader_cancelled_ = true;  // loads not yet begun are not worth finishing
  loader_.stop();
  writer_.stop();  // the final saves land before this returns
}

void RobotStorage::locate_save(RobotEntry& robot) {
  if (options_.state_dir.empty()) return;
  robot.file = state_file_name(robot.identity, engine_.state_extension());
  const std::string path = (std::filesystem::path(options_.state_dir) / robot.file).string();
  const std::string legacy =
      state_path(options_.state_dir, robot.view.key, engine_.state_extension());
  if (std::filesystem::exists(path) || writer_.pending(robot.file)) {
    // A save still being written (the robot's last connection just left) is loaded once
    // it lands, never skipped for a fresh brain that would then overwrite it.
    robot.load_path = path;
  } else if (std::filesystem::exists(legacy)) {
    robot.load_path = legacy;
    robot.legacy_file = true;
  }
}

void RobotStorage::pin_save(const RobotEntry& robot) {
  if (!robot.file.empty()) writer_.pin(robot.file);
}

RobotStorage::LoadOutcome RobotStorage::take_loaded(RobotEntry& robot, LoadedBrain& job) {
  const auto fresh_brain = [&] {
    try {
      robot.slot = engine_.create(robot.view.key, robot.view.sensory_dim, robot.view.motor_dim);
    } catch (const std::exception& e) {
      job.error = e.what();
    }
  };
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
    fresh_brain();
  }
  if (!robot.slot && job.other_config) {
    // Not corrupt: kept where it is, never moved aside nor overwritten (no save at release).
    const std::string why = "its saved brain " + job.error +
                            ": refused, the save is kept as it is (run the save's setting to "
                            "resume this robot, or move the file away to start it fresh)";
    stats_.error(kCodePersistenceLoad, robot.view.key,
                 "saved state " + robot.load_path + ": " + why);
    return {kCodePersistenceLoad, why};
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
    fresh_brain();
  }
  if (!robot.slot) return {kCodeInvalidCapabilities, "brain creation failed: " + job.error};
  return {};
}

void RobotStorage::saved(RobotEntry* robot) {
  if (robot) --robot->saving;
}

void RobotStorage::after_step(RobotEntry& robot) {
  if (options_.save_every_cycles > 0 && robot.view.cycle > 0 &&
      robot.view.cycle % options_.save_every_cycles == 0) {
    queue_save(robot, /*final_save=*/false);
  }
}

bool RobotStorage::queue_save(RobotEntry& robot, bool final_save) {
  if (robot.file.empty() || !robot.slot) return false;
  if (!may_save_(robot.base)) {
    // A server that lost its lease (etcd down, or this process stopped past the TTL) may
    // already have been replaced for this robot: its save would overwrite the new owner's.
    spdlog::warn("{}: not saved: this server does not hold the robot in the fleet now",
                 robot.view.key);
    return false;
  }
  try {
    const auto t0 = SteadyClock::now();
    BrainEngine::StateWriterFn snapshot = engine_.snapshot(*robot.slot);
    robot.last_snapshot = SteadyClock::now();
    ++robot.saving;
    const uint64_t entry = robot.entry_number;
    writer_.write(
        robot.file, robot.view.key, std::move(snapshot), final_save,
        [this, entry] { callbacks_.saved(entry); }, robot.view.cycle);
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

nlohmann::json RobotStorage::save_all(RobotTable& robots) {
  nlohmann::json saved = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::object();
  nlohmann::json failed = nlohmann::json::object();
  for (auto& [entry, robot] : robots.entries()) {
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

void RobotStorage::start_recording(RobotEntry& robot) {
  if (robot.recording) robot.recording->close();
  robot.recording.reset();
  if (!options_.recorder || !robot.slot || robot.view.id == 0) return;
  robot.recording =
      options_.recorder->open(robot.view.key, robot_key_hash(robot.view.key),
                              robot.view.sensory_dim, robot.view.motor_dim, robot.view.cycle);
}

void RobotStorage::let_go(RobotEntry& robot) {
  if (robot.recording) robot.recording->close();
  if (!robot.file.empty()) writer_.unpin(robot.file);
}

}  // namespace fieldbrain::server
