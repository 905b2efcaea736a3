// The real fieldbrain-server (built next to the sim tests, or FIELDBRAIN_TEST_SERVER) for the
// simulator's tests against a server that remembers robots: a small fast field, a state
// directory that outlives a restart, and one fixed loopback port, so that a run's robots can
// reconnect to the same address after stop() and start(). Ready when its --ready-file is
// written; stop() is SIGTERM (the server saves its robots and exits).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "test/support/child_process.h"
#include "test/support/files.h"
#include "test/support/free_port.h"
#include "test/support/wait_until.h"

namespace fieldbrain::sim::testing {

// Next to this executable (build*/bin), unless FIELDBRAIN_TEST_SERVER names another binary.
inline std::filesystem::path sim_test_server_executable() {
  if (const char* env = std::getenv("FIELDBRAIN_TEST_SERVER"); env && *env) return env;
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "fieldbrain-server";
}

// A new empty directory under the system's temporary one, unique to this process and call.
inline std::filesystem::path sim_test_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (name + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir);
  return dir;
}

// A JSON file's content (null when it is missing or not JSON: the test's check then fails).
inline nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Whether this build has the server (test/sim/CMakeLists.txt) or FIELDBRAIN_TEST_SERVER names one.
inline bool sim_test_server_built() {
#ifdef FIELDBRAIN_TEST_HAS_SERVER
  return true;
#else
  return std::filesystem::exists(sim_test_server_executable());
#endif
}

class SimTestServer {
 public:
  SimTestServer(std::filesystem::path dir, std::vector<std::string> extra = {})
      : dir_(std::move(dir)),
        extra_(std::move(extra)),
        port_(fieldbrain::test::free_port()),
        monitor_port_(fieldbrain::test::free_port()) {
    std::filesystem::create_directories(dir_);
  }

  // Starts it (again: same ports, same state) and waits for its ready file. False when it
  // did not start; log() says why.
  bool start() {
    const auto ready = dir_ / "ready.json";
    std::filesystem::remove(ready);
    std::vector<std::string> args = {sim_test_server_executable().string(),
                                     "--host", "127.0.0.1",
                                     "--port", std::to_string(port_),
                                     "--monitor-port", std::to_string(monitor_port_),
                                     "--resolution", "8",
                                     "--field-step", "fast",
                                     "--state-dir", (dir_ / "state").string(),
                                     "--ready-file", ready.string(),
                                     "--log-level", "info"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    process_ = std::make_unique<fieldbrain::test::ChildProcess>(args, log_path().string(),
                                                                /*append=*/true);
    return fieldbrain::test::wait_until([&] {
      if (!process_->alive()) return true;
      return std::filesystem::exists(ready) && std::filesystem::file_size(ready) > 0;
    }) && process_->alive();
  }

  // SIGTERM and the exit status (the server saves its robots first); -1 when it had to be
  // killed.
  int stop() {
    if (!process_) return -1;
    process_->signal(SIGTERM);
    const int status = process_->wait_exit(30.0);
    process_.reset();
    return status;
  }

  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string monitor() const { return "127.0.0.1:" + std::to_string(monitor_port_); }
  std::filesystem::path log_path() const { return dir_ / "server.log"; }
  std::string log() const { return fieldbrain::test::file_text(log_path()); }

 private:
  std::filesystem::path dir_;
  std::vector<std::string> extra_;
  int port_, monitor_port_;
  std::unique_ptr<fieldbrain::test::ChildProcess> process_;
};

}  // namespace fieldbrain::sim::testing
