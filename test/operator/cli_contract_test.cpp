// The command-line contract every program keeps (issue 40 item 3; app/cli/command_line.h):
// --help exits 0, a usage or configuration error exits 2 with a line naming the program, an
// unknown flag gets the nearest one, --print-config prints every key; and scripts/fleet.sh
// passes server flags through and ends on the first signal. Tested on the real executables.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test/server/fresh_dir.h"
#include "test/server/server_process.h"
#include "test/support/catch.h"
#include "test/support/files.h"
#include "test/support/skip.h"

using nlohmann::json;
using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

// name -> path, from the build's list (test/operator/CMakeLists.txt).
std::map<std::string, std::string> executables() {
  std::map<std::string, std::string> out;
  const std::string all = FIELDBRAIN_EXECUTABLES;
  for (size_t begin = 0; begin < all.size();) {
    size_t end = all.find('|', begin);
    if (end == std::string::npos) end = all.size();
    const std::string entry = all.substr(begin, end - begin);
    begin = end + 1;
    out[entry.substr(0, entry.find('='))] = entry.substr(entry.find('=') + 1);
  }
  return out;
}

struct Mistake {
  const char* program;
  const char* args;
  const char* says;  // in the output (stderr), besides the program's name
};

}  // namespace

TEST_CASE("Every program exits 2 on a usage or configuration error and names the nearest flag",
          "[operator][cli]") {
  // Each kind of mistake CLI11 once answered with its own code (105 a value out of range, 106
  // a missing subcommand or argument, 109 an unknown flag) or a program with 1.
  const std::vector<Mistake> mistakes = {
      {"fieldbrain", "--resolutoin 16",
       "unknown argument --resolutoin; did you mean --resolution?"},
      {"fieldbrain", "stages", "unknown argument stages; did you mean --stages?"},
      {"fieldbrain", "--cycles 0", "--cycles"},
      {"fieldbrain", "--config /nonexistent/brain.json", "/nonexistent/brain.json"},
      {"fieldbrain", "replay", "folder"},
      {"fieldbrain", "replay /nonexistent --per-cylce", "did you mean --per-cycle?"},
      {"fieldbrain", "compare-original --cycels 3", "did you mean --cycles?"},
      {"fieldbrain-server", "--resolutoin 16", "did you mean --resolution?"},
      {"fieldbrain-server", "--port eighty", "--port"},
      {"fieldbrain-server", "--set brain.resolutoin=16", "resolutoin"},
      {"fieldbrain-sim", "--robtos 2", "did you mean --robots?"},
      {"fieldbrain-sim", "--robots 0", "--robots"},
      {"fieldbrain-sim", "--framing z", "framing"},
      {"fieldbrain-bench", "--quik", "did you mean --quick?"},
      {"fieldbrain-bench", "--impl nonsense", "--impl"},
      {"fieldbrain-hrr", "", "subcommand"},
      {"fieldbrain-hrr", "vector --seed 1 --name x --dimm 64", "did you mean --dim?"},
      // Another error first (a required option missing) still names the misspelt flag.
      {"fieldbrain-hrr", "vector --seed 1 --nmae x", "did you mean --name?"},
      {"fieldbrain-soak", "--secnds 1", "did you mean --seconds?"},
      {"fieldbrain-soak", "--robots 1,x", "--robots"},
      {"fieldbrain-soak", "-c /nonexistent/server.json", "/nonexistent/server.json"},
  };
  const auto exe = executables();
  std::map<std::string, int> checked;
  for (const Mistake& m : mistakes) {
    if (!exe.count(m.program)) continue;  // not in this build
    const CommandResult r = run_command(exe.at(m.program) + " " + m.args, 60);
    INFO(m.program << " " << m.args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(m.says));
    CHECK_THAT(r.output, Catch::Contains(std::string(m.program) + ": "));
    ++checked[m.program];
  }
  // All six programs are built with the server (test/operator/CMakeLists.txt).
  CHECK(checked.size() == 6);
}

TEST_CASE("Every program's --help exits 0 with its usage", "[operator][cli]") {
  for (const auto& [name, path] : executables()) {
    const CommandResult r = run_command(path + " --help", 60);
    INFO(name << "\n" << r.output);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("Usage:") && Catch::Contains("--help"));
  }
}

TEST_CASE("The server's and fieldbrain's --print-config print the whole effective configuration, defaults included",
          "[operator][cli]") {
  const auto exe = executables();
  // The shipped default config names eight brain keys; the brain reads more (profile, the
  // legacy keys...), and the printed config must hold them all.
  const json file = json::parse(
      fieldbrain::test::file_text(fs::path(FIELDBRAIN_SOURCE_DIR) / "configs/default.json"));
  SECTION("fieldbrain-server") {
    const CommandResult r = run_command(exe.at("fieldbrain-server") + " --config " +
                                            FIELDBRAIN_SOURCE_DIR "/configs/default.json" +
                                            " --resolution 16 --print-config",
                                        60);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const json printed = json::parse(r.output);
    const json& brain = printed.at("brain");
    for (const auto& [key, value] : file.at("brain").items()) {
      INFO(key);
      CHECK(brain.contains(key));
    }
    CHECK(brain.at("resolution") == 16);  // the flag wins over the file
    CHECK(brain.at("profile") == "fieldbrain");
    CHECK(brain.size() > file.at("brain").size());
    CHECK(printed.at("robot_report_interval_s") == 60);
  }
  SECTION("fieldbrain") {
    const CommandResult r =
        run_command(exe.at("fieldbrain") + " --resolution 8 --print-config", 60);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const json printed = json::parse(r.output);
    for (const auto& [key, value] : file.at("brain").items()) {
      INFO(key);
      CHECK(printed.contains(key));
    }
    CHECK(printed.at("resolution") == 8);
    CHECK(printed.at("sensory_dim") == file.at("brain").at("sensory_dim"));
    CHECK(printed.contains("profile"));
  }
}

TEST_CASE("fieldbrain says what S and M its stream feeds and prints the motors as numbers",
          "[operator][cli]") {
  const auto exe = executables();
  const CommandResult r = run_command(exe.at("fieldbrain") + " --cycles 2 --resolution 8", 120);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // configs/default.json: S = 24, M = 4, not a PiCar-X's 12 and 6.
  CHECK_THAT(r.output, Catch::Contains("padded with 0.5 to S = 24") &&
                           Catch::Contains("configs/picarx.json"));
  std::smatch m;
  const std::string out = r.output;
  REQUIRE(std::regex_search(
      out, m, std::regex(R"(motors of the last cycle \(robot 0, M = 4\):((?: -?[0-9.]+)+)\n)")));
  std::istringstream numbers(m[1].str());
  int count = 0;
  for (double v; numbers >> v;) {
    CHECK(std::abs(v) <= 1.0);
    ++count;
  }
  CHECK(count == 4);
  CHECK(out.find("CPUFloatType") == std::string::npos);  // no tensor dump
}

TEST_CASE("scripts/fleet.sh refuses a misspelt server flag before starting anything",
          "[operator][cli]") {
  const auto dir = fresh_dir("fieldbrain-fleet-flags");
  const std::string bin = fs::path(FIELDBRAIN_SERVER_EXE).parent_path().string();
  const CommandResult r =
      run_command("env SKIP_BUILD=1 BIN=" + bin + " OUT=" + dir.string() +
                      " " FIELDBRAIN_SOURCE_DIR "/scripts/fleet.sh --resolutoin 16",
                  60);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("did you mean --resolution?"));
  CHECK_FALSE(fs::exists(dir / "etcd.log"));  // nothing was started
}

TEST_CASE("scripts/fleet.sh passes server flags through and ends on the first SIGINT",
          "[operator][cli][fleet]") {
  for (const char* tool : {"etcd", "haproxy", "curl"}) {
    if (run_command(std::string("sh -c 'command -v ") + tool + "'", 10).exit_code != 0) {
      FIELDBRAIN_SKIP(std::string(tool) + " is not installed (scripts/setup.sh installs it)");
    }
  }
  const auto dir = fresh_dir("fieldbrain-fleet-signal");
  const std::string bin = fs::path(FIELDBRAIN_SERVER_EXE).parent_path().string();
  // Ports of its own, BASE + 1..999, below the kernel's ephemeral range (32768 and up) where
  // other tests' servers bind.
  std::mt19937 rng(static_cast<unsigned>(::getpid()));
  const int base = 20000 + static_cast<int>(rng() % 110) * 100;
  const fs::path log = dir / "fleet.log";
  fieldbrain::test::ChildProcess fleet(
      {"/usr/bin/env", "SKIP_BUILD=1", "BIN=" + bin, "OUT=" + dir.string(),
       "BASE=" + std::to_string(base), "/bin/bash", FIELDBRAIN_SOURCE_DIR "/scripts/fleet.sh",
       "--resolution", "8"},
      log.string());
  REQUIRE(fleet.pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (fieldbrain::test::file_text(log).find("robots connect to") == std::string::npos &&
         fleet.alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(fieldbrain::test::file_text(log));
  REQUIRE(fleet.alive());
  // The flag reached every server: the brain its ready log line describes.
  for (int i = 1; i <= 3; ++i) {
    const std::string server_log =
        fieldbrain::test::file_text(dir / ("s" + std::to_string(i) + ".log"));
    INFO(server_log);
    CHECK_THAT(server_log, Catch::Contains("\"resolution\":8"));
  }
  fleet.signal(SIGINT);
  const int status = fleet.wait_exit(90);
  const std::string text = fieldbrain::test::file_text(log);
  INFO(text);
  CHECK(status == 130);
  const size_t stopping = text.find("stopping: servers first");
  REQUIRE(stopping != std::string::npos);
  CHECK(text.find("(etcd not answering)", stopping) == std::string::npos);
}
