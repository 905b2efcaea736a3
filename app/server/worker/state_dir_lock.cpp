#include "app/server/worker/state_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "app/server/protocol/printable.h"

namespace fieldbrain::server {
namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string read_all(int fd) {
  std::string out;
  char buf[512];
  for (off_t at = 0; out.size() < 4096;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return out;
}

// "pid 123 on host h, started 2026-11-28T05:00:00Z", from what the holder wrote.
std::string describe_holder(int fd) {
  const auto j = nlohmann::json::parse(read_all(fd), nullptr, false);
  if (!j.is_object() || !j.contains("pid")) return "a server that wrote no details";
  return "pid " + printable(j.value("pid", nlohmann::json()).dump(), 20) + " on host " +
         printable(j.value("host", std::string("?")), 100) + ", started " +
         printable(j.value("started", std::string("?")), 40);
}

}  // namespace

StateDirLock::StateDirLock(const std::string& state_dir, Mode mode) {
  if (state_dir.empty()) return;
  const std::string path = state_dir + "/" + kFileName;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("state_dir '" + state_dir + "': cannot open its lock file " + path +
                             ": " + std::strerror(errno));
  }
  if (::flock(fd_, (mode == Mode::kAlone ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    if (err != EWOULDBLOCK) {
      holder = std::string("the lock failed: ") + std::strerror(err);
    } else if (mode == Mode::kAlone && ::flock(fd_, LOCK_SH | LOCK_NB) == 0) {
      holder = "fleet servers (cluster mode) share it";  // shared holders only
    } else {
      holder = "another fieldbrain-server holds it: " + describe_holder(fd_);
    }
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(
        "state_dir '" + state_dir + "' is in use (" + holder + "; lock " + path +
        "): stop that server, or give this one another --state-dir" +
        (mode == Mode::kFleet ? "" : " (fleet servers share one with --cluster)"));
  }
  if (mode == Mode::kFleet) return;  // shared: the details would be one server's of many
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const std::string details =
      nlohmann::json{{"pid", ::getpid()}, {"host", host}, {"started", utc_now()}}.dump() + "\n";
  // Best effort: the lock holds whether or not its details could be written.
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd_, details.data(), details.size(), 0);
  }
}

StateDirLock::~StateDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace fieldbrain::server
