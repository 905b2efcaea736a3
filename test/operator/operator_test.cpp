// What operators expect (issue 25 item 7), tested on the real executables: --version, the
// server's ready line with the ports it bound, --set for any key, and deploy/fieldbrain.service.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include "test/support/catch.h"
#include "test/support/skip.h"
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "app/version/version.h"
#include "test/server/fresh_dir.h"
#include "test/server/server_process.h"
#include "test/support/files.h"

using nlohmann::json;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

using fieldbrain::test::file_text;

using Run = CommandResult;

Run run(const std::string& command) { return run_command(command); }

}  // namespace

TEST_CASE("every executable answers --version with the project version", "[operator]") {
  const std::string all = FIELDBRAIN_EXECUTABLES;
  int checked = 0;
  for (size_t begin = 0; begin < all.size();) {
    size_t end = all.find('|', begin);
    if (end == std::string::npos) end = all.size();
    const std::string entry = all.substr(begin, end - begin);
    begin = end + 1;
    const std::string name = entry.substr(0, entry.find('='));
    const std::string path = entry.substr(entry.find('=') + 1);
    INFO(name);
    const Run r = run(path + " --version");
    CHECK(r.exit_code == 0);
    CHECK(r.output == name + " " + fieldbrain::version() + "\n");
    CHECK(r.output.rfind(name + " " + FIELDBRAIN_PROJECT_VERSION, 0) == 0);
    ++checked;
  }
  CHECK(checked == 6);
}

TEST_CASE("with --port 0 the server prints one JSON ready line with the ports it bound",
          "[operator]") {
  const auto dir = fresh_dir("fieldbrain-ready-line");
  const fs::path ready = dir / "ready.json", log = dir / "stdout.log", err = dir / "stderr.log";
  // stdout and stderr apart: the ready line must be all of stdout.
  const std::string cmd = std::string("exec ") + FIELDBRAIN_SERVER_EXE +
                          " --host 127.0.0.1 --port 0 --monitor-port 0 --web-port 0 "
                          "--resolution 8 --state-dir '' --ready-file " +
                          ready.string() + " >" + log.string() + " 2>" + err.string();
  ChildProcess server({"/bin/sh", "-c", cmd});
  REQUIRE(server.pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (!fs::exists(ready) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(file_text(err));
  REQUIRE(fs::exists(ready));
  const std::string line = file_text(ready);
  const json j = json::parse(line);
  CHECK(j["ready"] == true);
  CHECK(j["version"] == fieldbrain::version());
  CHECK(j["pid"] == server.pid);
  CHECK(j["port"].get<int>() > 0);
  CHECK(j["monitor_port"].get<int>() > 0);
  CHECK(j["web_port"].get<int>() > 0);
  // The same line on stdout, and nothing else there: logs go to stderr.
  CHECK(file_text(log) == line);
  // Its first log line names the version.
  const std::string logs = file_text(err);
  CHECK(logs.substr(0, logs.find('\n'))
            .find(std::string("fieldbrain-server ") + fieldbrain::version()) != std::string::npos);
  // The robot port it names is the one listening.
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), j["port"].get<uint16_t>()}, ec);
  CHECK_FALSE(ec);
  s.close();
  ::kill(server.pid, SIGTERM);
  CHECK(server.wait_exit(60) == 0);
}

TEST_CASE("any config key can be set with --set, nested ones included, and a bad one is named",
          "[operator]") {
  const Run r = run(std::string(FIELDBRAIN_SERVER_EXE) +
                    " --config " FIELDBRAIN_SOURCE_DIR
                    "/configs/picarx.json"
                    " --set robots.takeover_after_s=5 --set log_level=debug --set brain.seed=7"
                    " --print-config");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json c = json::parse(r.output);
  CHECK(c["robots"]["takeover_after_s"] == 5);
  CHECK(c["log_level"] == "debug");
  CHECK(c["brain"]["seed"] == 7);
  CHECK(c["brain"]["sensory_dim"] == 12);  // the file's keys stay
  const Run bad = run(std::string(FIELDBRAIN_SERVER_EXE) + " --set robots.takeover_aftr_s=5");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--set: unknown config key 'robots.takeover_aftr_s' (did "
                                         "you mean 'takeover_after_s'?)"));
}

TEST_CASE("a config file that is not JSON stops the server naming the line and column",
          "[operator]") {
  const auto dir = fresh_dir("fieldbrain-broken-json");
  const fs::path path = dir / "broken.json";
  std::ofstream(path) << "{\n  \"port\": 9999\n  \"host\": \"0.0.0.0\"\n}\n";
  const Run r = run(std::string(FIELDBRAIN_SERVER_EXE) + " --config " + path.string());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("config file " + path.string() +
                                       " is not valid JSON: line 3, column 8"));
}

TEST_CASE("deploy/fieldbrain.service passes systemd-analyze verify", "[operator]") {
  const std::string analyze = FIELDBRAIN_SYSTEMD_ANALYZE;
  if (analyze.empty() || !fs::exists(analyze)) {
    // scripts/setup.sh installs systemd; only a machine set up otherwise gets here.
    FIELDBRAIN_SKIP("systemd-analyze is not installed (Debian package systemd)");
  }
  // verify checks that ExecStart's program exists: point it at this build's server.
  const auto dir = fresh_dir("fieldbrain-unit");
  std::string unit = file_text(fs::path(FIELDBRAIN_SOURCE_DIR) / "deploy/fieldbrain.service");
  unit = std::regex_replace(unit, std::regex("/usr/local/bin/fieldbrain-server"),
                            FIELDBRAIN_SERVER_EXE);
  REQUIRE(unit.find("DynamicUser=yes") != std::string::npos);  // never root
  REQUIRE(unit.find("StateDirectory=fieldbrain") != std::string::npos);
  std::ofstream(dir / "fieldbrain.service") << unit;
  const Run r = run(analyze + " verify " + (dir / "fieldbrain.service").string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("fieldbrain.service") == std::string::npos);  // no complaint about it
}
