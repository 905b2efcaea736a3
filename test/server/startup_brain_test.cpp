// Fail fast on bad configuration (issue 12 item 6): fieldbrain-server refuses to start, before
// any port opens, with an exit code != 0 and a message naming the key; a server started
// without a config runs the "fast" step the shipped configs name.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test/server/fresh_dir.h"
#include "test/server/loopback_peer.h"
#include "test/server/server_process.h"

using namespace fieldbrain::server::testing;

namespace {

using Run = CommandResult;

// Runs the server executable with `args` (bounded), capturing its output.
Run run_server(const std::string& args) {
  return run_command(std::string(FIELDBRAIN_SERVER_EXE) +
                         " --host 127.0.0.1 --port 0 --monitor-port -1 --resolution 8 "
                         "--log-level warn " +
                         args,
                     60);
}

}  // namespace

TEST_CASE("start-up refuses an unusable state dir with a message naming the key", "[server]") {
  const auto dir = fresh_dir("fieldbrain-startup-state");
  const auto file = dir / "not-a-dir";
  std::ofstream(file) << "a file where the state directory should go\n";
  const Run r = run_server("--state-dir " + (file / "state").string());
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("state_dir") != std::string::npos);
  CHECK(r.output.find("refusing to start") != std::string::npos);
}

TEST_CASE("start-up refuses a field step that cannot be loaded, naming the key", "[server]") {
  const Run r = run_server("--state-dir '' --field-step /nonexistent/field_step.pt");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("field_step") != std::string::npos);
  const Run bad_key = run_server("--state-dir '' --device tpu");
  INFO(bad_key.output);
  CHECK(bad_key.exit_code != 0);
  CHECK(bad_key.output.find("device") != std::string::npos);
}

TEST_CASE("start-up refuses device cuda on a machine without CUDA", "[server]") {
  if (std::filesystem::exists("/dev/nvidiactl")) {
    SUCCEED("this machine has an NVIDIA driver; the refusal is checked on machines without");
    return;
  }
  const Run r = run_server("--state-dir '' --device cuda");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("refusing to start") != std::string::npos);
  CHECK(r.output.find("device") != std::string::npos);
}

TEST_CASE("a server started without a config uses the fast field step", "[server]") {
  const Run r = run_server("--print-config");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["brain"]["field_step"] == "fast");
  CHECK(j["monitor_host"] == "127.0.0.1");
}

TEST_CASE("running out of file descriptors backs off and logs once per interval", "[server]") {
  const int port = free_loopback_port();
  const auto dir = fresh_dir("fieldbrain-emfile");
  const std::string log = (dir / "server.log").string();
  // 40 descriptors: the server starts, then runs out after a couple of dozen connections.
  const std::string script = "ulimit -n 40; exec '" + std::string(FIELDBRAIN_SERVER_EXE) +
                             "' --host 127.0.0.1 --port " + std::to_string(port) +
                             " --monitor-port -1 --resolution 8 --state-dir '' > '" + log +
                             "' 2>&1";
  ChildProcess proc({"/bin/sh", "-c", script});
  REQUIRE(proc.pid > 0);
  std::vector<std::unique_ptr<LoopbackPeer>> peers;
  for (int i = 0; i < 300 && peers.empty(); ++i) {
    try {
      peers.push_back(std::make_unique<LoopbackPeer>("127.0.0.1", static_cast<uint16_t>(port)));
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  REQUIRE_FALSE(peers.empty());
  // The kernel completes these connections (backlog) whether or not the server can accept.
  for (int i = 0; i < 60; ++i) {
    peers.push_back(std::make_unique<LoopbackPeer>("127.0.0.1", static_cast<uint16_t>(port)));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ::kill(proc.pid, SIGKILL);
  proc.wait_exit(5);
  std::ifstream in(log);
  size_t lines = 0, failures = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    if (line.find("accept failed") != std::string::npos) ++failures;
  }
  INFO(lines << " log lines, " << failures << " about accept failing");
  CHECK(failures >= 1);  // it did run out
  CHECK(failures <= 2);  // and said so once per 10 s, not once per retry
  CHECK(lines < 50);
}
