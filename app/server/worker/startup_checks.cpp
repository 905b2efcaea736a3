#include "app/server/worker/startup_checks.h"

#include "app/server/worker/identity_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace fieldbrain::server {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse_state_dir(const std::string& dir, const std::string& why) {
  throw std::runtime_error("config key 'state_dir': directory '" + dir + "' " + why +
                           " (set state_dir to a writable directory, or \"\" to run without "
                           "persistence)");
}

}  // namespace

uint64_t check_state_dir(const std::string& state_dir) {
  if (state_dir.empty()) {
    spdlog::warn("state_dir is \"\": persistence is off, robots will not be saved");
    return 0;
  }
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (ec) refuse_state_dir(state_dir, "cannot be created: " + ec.message());
  if (!fs::is_directory(state_dir, ec)) refuse_state_dir(state_dir, "is not a directory");
  const std::string probe =
      (fs::path(state_dir) / (".fieldbrain-write-test-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) refuse_state_dir(state_dir, std::string("is not writable: ") + std::strerror(errno));
  const std::vector<char> page(4096, 0);
  const bool ok = ::write(fd, page.data(), page.size()) == static_cast<ssize_t>(page.size()) &&
                  ::fsync(fd) == 0;
  const int saved_errno = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!ok) {
    refuse_state_dir(state_dir, std::string("is not writable: ") + std::strerror(saved_errno));
  }
  struct statvfs vfs {};
  uint64_t free_bytes = 0;
  if (::statvfs(state_dir.c_str(), &vfs) == 0) {
    free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  }
  const double gib = free_bytes / double(1ull << 30);
  const std::string where = fs::absolute(state_dir, ec).string();
  if (free_bytes < (256ull << 20)) {
    spdlog::warn("state_dir {}: writable, only {:.2f} GiB free: saves may fail", where, gib);
  } else {
    spdlog::info("state_dir {}: writable, {:.1f} GiB free", where, gib);
  }
  return free_bytes;
}

void check_brain(BrainEngine& engine, const nlohmann::json& brain) {
  const int s = brain.value("sensory_dim", 16);
  const int m = brain.value("motor_dim", 4);
  try {
    const BrainEngine::Slot slot = engine.create("fieldbrain-startup-check", s, m);
    try {
      engine.step_group({slot}, std::vector<float>(static_cast<size_t>(s), 0.0f), {0.0f});
    } catch (...) {
      engine.destroy(slot);
      throw;
    }
    engine.destroy(slot);
  } catch (const std::exception& e) {
    throw std::runtime_error("config key 'brain' (field_step \"" +
                             brain.value("field_step", std::string("?")) + "\", device \"" +
                             brain.value("device", std::string("cpu")) +
                             "\"): a trial brain failed: " + e.what());
  }
  spdlog::info("brain check passed: {}", engine.describe().dump());
}

void check_identities(const std::string& state_dir) {
  IdentityStore store;
  try {
    store.open(state_dir);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("config key 'state_dir': ") + e.what());
  }
}

void run_startup_checks(const ServerConfig& config, BrainEngine& engine) {
  config.validate();
  check_state_dir(config.state_dir);
  check_identities(config.state_dir);
  check_brain(engine, config.brain);
}

}  // namespace fieldbrain::server
