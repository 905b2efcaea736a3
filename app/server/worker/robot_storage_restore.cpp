// RobotStorage's answer to a brain that stopped being finite (robot_storage.h,
// restore_poisoned) and the loader job it shares with attach (post_load). A brain is detected
// in the very cycle its field or motors stop being finite (the engine returns NaN motors for
// it, brain_engine.h), before any save of that cycle is queued, so the save on disk is the last
// good state: the robot goes back to it. The persistence layer refuses to write or read a
// non-finite state besides (brain/persistence.h), so no path can overwrite that save.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "app/server/protocol/handshake.h"
#include "app/server/worker/robot_storage.h"
#include "brain/save_mismatch.h"

namespace fieldbrain::server {

bool RobotStorage::post_load(const RobotEntry& robot) {
  return loader_.post([this, entry = robot.entry_number, key = robot.view.key,
                       s = robot.view.sensory_dim, m = robot.view.motor_dim, path = robot.load_path,
                       file = robot.file] {
    LoadedBrain loaded{entry, nullptr, "", false};
    if (loader_cancelled_) return;
    writer_.wait_written(file);
    if (!std::filesystem::exists(path)) {
      loaded.missing = true;  // that last write failed: start fresh
    } else {
      try {
        loaded.brain = engine_.load_detached(key, s, m, path);
      } catch (const SaveMismatch& e) {
        loaded.error = "was made for " + e.setting() + " " + e.saved() + "; this server runs " +
                       e.setting() + " " + e.running();
        loaded.other_config = true;
      } catch (const std::exception& e) {
        loaded.error = e.what();
      }
    }
    callbacks_.loaded(std::move(loaded));
  });
}

std::string RobotStorage::restore_poisoned(RobotEntry& robot, int64_t cycle) {
  if (robot.slot) {
    try {
      engine_.destroy(*robot.slot);
    } catch (const std::exception& e) {
      spdlog::error("{}: releasing the non-finite brain failed: {}", robot.view.key, e.what());
    }
    robot.slot.reset();
  }
  // The save to go back to: this robot's own file (written, or still being written by the
  // writer: post_load waits for it), else the older release's file it was loaded from.
  std::string path;
  if (!robot.file.empty()) {
    const std::string own = (std::filesystem::path(options_.state_dir) / robot.file).string();
    if (std::filesystem::exists(own) || writer_.pending(robot.file)) {
      path = own;
      robot.legacy_file = false;
    } else if (robot.legacy_file && std::filesystem::exists(robot.load_path)) {
      path = robot.load_path;
    }
  }
  std::string fate;
  if (!path.empty()) {
    robot.load_path = path;
    if (post_load(robot)) {
      fate = "restoring its last good save " + path + " (a safe stop until it has loaded)";
    } else {
      fate = "the server is stopping";
    }
  } else {
    robot.load_path.clear();
    try {
      robot.slot = engine_.create(robot.view.key, robot.view.sensory_dim, robot.view.motor_dim);
      robot.view.cycle = engine_.cycle(*robot.slot);
      fate = robot.file.empty() ? "persistence is off: replaced by a fresh brain"
                                : "no save yet: replaced by a fresh brain";
      start_recording(robot);  // a new brain, a new recording (as a load starts one)
    } catch (const std::exception& e) {
      fate = std::string("a fresh brain could not be made: ") + e.what();
    }
  }
  const std::string message =
      "the brain's state stopped being finite at cycle " + std::to_string(cycle) + "; " + fate;
  stats_.error(kCodeBrainStateNotFinite, robot.view.key, message);
  return message;
}

}  // namespace fieldbrain::server
