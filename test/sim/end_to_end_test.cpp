// End to end: the real fieldbrain-server (built next to this test executable) as a child
// process on ephemeral loopback ports with a small field, three simulated robots for 300
// cycles, then the outputs checked from disk: summary.json counts and run_data.json (paths,
// motors, confidence, field slices), and scripts/plot_run.py drawing pictures from a run.
// The e2e case is skipped (test/support/skip.h) when this build has no server.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include "test/support/catch.h"
#include "test/support/skip.h"
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "app/sim/arena.h"
#include "app/sim/sim_run.h"
#include "test/sim/sim_server.h"
#include "test/support/files.h"

extern char** environ;

using namespace fieldbrain::sim;
using namespace fieldbrain::sim::testing;
namespace fs = std::filesystem;

namespace {

constexpr int kResolution = 8;  // the small field SimTestServer runs (test/sim/sim_server.h)

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// A PNG file: exists, starts with the PNG signature and is not trivially small.
bool looks_like_png(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  return in && std::string(sig + 1, 3) == "PNG" && fs::file_size(path) > 5000;
}

}  // namespace

TEST_CASE("Server plus three simulated robots for 300 cycles on loopback", "[sim][e2e]") {
  const fs::path exe = sim_test_server_executable();
  // This build has no fieldbrain-server (no brain library); FIELDBRAIN_TEST_SERVER names one.
  if (!sim_test_server_built()) FIELDBRAIN_SKIP("no " << exe << ": fieldbrain-server is not in this build");
  INFO("server executable " << exe);
  const fs::path dir = sim_test_dir("fieldbrain-sim-e2e");
  SimTestServer server(dir);
  INFO("server log:\n" << server.log());
  REQUIRE(server.start());

  SimOptions o;
  o.server = server.server();
  o.monitor = server.monitor();
  o.robots = 3;
  o.cycles = 300;
  o.out_dir = (dir / "out").string();
  o.framing = Framing::B;
  o.reward = true;
  o.progress = false;
  o.timeout_s = 60;
  run_sim(o);

  std::ifstream in(dir / "out" / "summary.json");
  REQUIRE(in);
  const auto summary = nlohmann::json::parse(in);
  INFO("summary:\n" << summary.dump(2));
  REQUIRE(summary["robots"].size() == 3);
  std::set<std::string> keys;
  for (const auto& r : summary["robots"]) {
    CHECK(r["cycles"] == 300);
    CHECK(r["replies"] == 300);
    CHECK(r["errors"] == 0);
    keys.insert(r["robot_key"].get<std::string>());
  }
  CHECK(keys.size() == 3);  // three separate robots on the server
  CHECK(summary["monitor"]["reachable"] == true);

  // run_data.json: every cycle of every robot, inside the arena, motors in [-1, 1], the
  // collisions the summary counts, the brain's confidence sampled, the field slices.
  const auto map = read_json(default_arena_path());
  const double W = map["size"][0].get<double>(), H = map["size"][1].get<double>();
  const auto data = read_json(dir / "out" / summary["run_data"].get<std::string>());
  CHECK(data["arena"]["size"][0].get<double>() == W);
  REQUIRE(data["robots"].size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto& r = data["robots"][i];
    CAPTURE(i);
    REQUIRE(r["x"].size() == 300);
    REQUIRE(r["motors"].size() == 300);
    CHECK(r["robot_key"] == summary["robots"][i]["robot_key"]);
    long long collisions = 0;
    bool inside = true, bounded = true, rewarded = false;
    for (size_t c = 0; c < 300; ++c) {
      const double x = r["x"][c], y = r["y"][c];
      inside = inside && x >= 0 && x <= W && y >= 0 && y <= H;
      for (double m : r["motors"][c]) bounded = bounded && std::abs(m) <= 1.0;
      collisions += r["collided"][c].get<int>();
      rewarded = rewarded || r["reward"][c].get<double>() != 0.0;
    }
    CHECK(inside);
    CHECK(bounded);
    CHECK(rewarded);
    CHECK(collisions == summary["robots"][i]["collisions"].get<long long>());
    const auto& conf = r["confidence"]["value"];
    CHECK(conf.size() >= 1);
    for (double v : conf) CHECK((v >= 0.0 && v <= 1.0));
  }
  // Field slices: 3 robots x channels 0, 62, 63, each R x R.
  CHECK(summary["field_slices"].size() == 9);
  REQUIRE(data["slices"].size() == 9);
  for (const auto& s : data["slices"]) {
    REQUIRE(s["values"].size() == size_t(kResolution));
    CHECK(s["values"][0].size() == size_t(kResolution));
  }

  SECTION("the JSON-lines mode drives a robot too") {
    SimOptions j = o;
    j.framing = Framing::JsonLines;
    j.robots = 1;
    j.cycles = 30;
    j.out_dir = (dir / "out-json").string();
    const SimReport r = run_sim(j);
    REQUIRE(r.robots.size() == 1);
    CHECK(r.robots[0].replies == 30);
    CHECK(r.robots[0].errors.empty());
    CHECK(r.robots[0].robot_key.rfind("sim-0", 0) == 0);
  }

  CHECK(server.stop() == 0);  // SIGTERM: saves and exits cleanly
  fs::remove_all(dir);
}

TEST_CASE("An unreachable monitor is reported, not fatal", "[sim]") {
  const fs::path dir = sim_test_dir("fieldbrain-sim-nomonitor");
  SimOptions o;
  o.controller = ControllerKind::Forward;
  o.cycles = 20;
  o.progress = false;
  o.out_dir = dir.string();
  const SimReport r = run_sim(o);
  CHECK(r.ok());
  CHECK(fs::exists(dir / "summary.json"));
  CHECK(fs::exists(dir / "run_data.json"));

  SECTION("a brain run whose server is down records the error per robot") {
    // Port 1 on loopback: nothing listens there.
    o.controller = ControllerKind::Brain;
    o.server = "127.0.0.1:1";
    o.monitor = "127.0.0.1:1";
    o.robots = 2;
    o.timeout_s = 2;
    const SimReport down = run_sim(o);
    CHECK_FALSE(down.ok());
    CHECK_FALSE(down.monitor_reachable);
    for (const auto& robot : down.robots) {
      REQUIRE(robot.errors.size() == 1);
      CHECK_THAT(robot.errors[0], Catch::Contains("cannot connect"));
      CHECK(robot.cycles == 0);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("scripts/plot_run.py draws a run's pictures and prints its summary table",
          "[sim][plot]") {
  const fs::path dir = sim_test_dir("fieldbrain-sim-plot");
  SimOptions o;
  o.controller = ControllerKind::Forward;
  o.robots = 2;
  o.cycles = 60;
  o.progress = false;
  o.out_dir = dir.string();
  REQUIRE(run_sim(o).ok());
  const std::string cmd = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                          "/scripts/plot_run.py " + dir.string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  const int status = pclose(pipe);
  INFO(cmd << "\n" << output);
  CHECK(status == 0);
  // One row per robot and the totals, each with its 60 (or 120) cycles.
  CHECK(std::regex_search(output, std::regex(R"(\n\s*0\s+60\s)")));
  CHECK(std::regex_search(output, std::regex(R"(\n\s*all\s+120\s)")));
  CHECK(looks_like_png(dir / "trajectories.png"));
  CHECK(looks_like_png(dir / "timeseries.png"));
  CHECK(output.find("picture: " + (dir / "trajectories.png").string()) != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "field_slices.png"));  // no brain, no slices
  fs::remove_all(dir);
}

namespace {

// True once `pid` catches SIGINT (its handler is installed): /proc/PID/status SigCgt.
bool catches_sigint(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("SigCgt:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
  }
  return false;
}

}  // namespace

TEST_CASE("Ctrl-C ends a simulator run cleanly, with its outputs for the cycles done", "[sim]") {
  const fs::path dir = sim_test_dir("fieldbrain-sim-interrupt");
  SimOptions o;
  o.controller = ControllerKind::Forward;
  o.cycles = 1000000000;
  o.progress = false;
  o.out_dir = dir.string();

  SECTION("run_sim stops every robot after its cycle when asked") {
    std::atomic<int> stop{0};
    o.robots = 2;
    o.stop_signal = &stop;
    std::thread asker([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      stop.store(SIGINT);
    });
    const SimReport r = run_sim(o);
    asker.join();
    CHECK(r.interrupted_by == SIGINT);
    CHECK(r.ok());  // stopping is not an error
    long long done = 0;
    for (const auto& robot : r.robots) {
      CHECK(robot.cycles > 0);
      CHECK(robot.cycles < o.cycles);
      done += robot.cycles;
    }
    const auto summary = read_json(dir / "summary.json");
    CHECK(summary["interrupted_by"] == "SIGINT");
    CHECK(summary["totals"]["cycles"] == done);
    CHECK(summary["robots"][0].contains("displacement_m"));
    CHECK(read_json(dir / "run_data.json")["robots"].size() == 2);
  }

  SECTION("fieldbrain-sim exits 130 after a SIGINT, not killed, its files written") {
    // Built with this suite (test/sim/CMakeLists.txt): missing is a failure, not a skip.
    const fs::path exe = fs::read_symlink("/proc/self/exe").parent_path() / "fieldbrain-sim";
    INFO("simulator executable " << exe);
    REQUIRE(fs::exists(exe));
    std::vector<std::string> args = {exe.string(), "--controller",  "forward", "--cycles",
                                     "1000000000", "--no-progress", "--out",   dir.string()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = (dir / "sim.log").string();
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    REQUIRE(posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 200 && !catches_sigint(pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // some cycles
    kill(pid, SIGINT);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    const auto summary = read_json(dir / "summary.json");
    CHECK(summary["interrupted_by"] == "SIGINT");
    CHECK(summary["totals"]["cycles"].get<long long>() > 0);
    CHECK(fs::exists(dir / "run_data.json"));
  }
  fs::remove_all(dir);
}
