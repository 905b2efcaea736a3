// Issue 40 item 2 through a real fleet: the simulator (app/sim, run_sim) paced like a robot
// through HAProxy in front of fleet servers (fleet_process.h), its server killed mid-run. The
// run must show the failover as a gap in its report (summary.json and run_data.json) and go on
// cycling with the brain another server resumed from the last save, not end or start afresh.
#include "test/support/catch.h"

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "app/sim/sim_run.h"
#include "test/cluster/fleet_process.h"
#include "test/support/files.h"
#include "test/support/skip.h"
#include "test/support/wait_until.h"

namespace {

namespace fs = std::filesystem;
namespace fleet_testing = fieldbrain::server::cluster::testing;

// Why this machine cannot run a fleet ("" when it can).
std::string fleet_tools_missing() {
  try {
    fleet_testing::etcd_binary();
  } catch (const std::exception& e) {
    return e.what();
  }
  if (::access("/usr/sbin/haproxy", X_OK) != 0) {
    return "HAProxy is not installed (/usr/sbin/haproxy; Debian package haproxy)";
  }
  return "";
}

// True once `state` holds a save of JSON robot `id` (its readable name "json_<id>-<digest>.pt",
// app/server/worker/state_files.h); the first is written at save_every_cycles.
bool json_robot_saved(const fs::path& state, const std::string& id) {
  const std::string prefix = "json_" + id + "-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(state, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".pt") return true;
  }
  return false;
}

}  // namespace

TEST_CASE("A simulated robot paced at 20 Hz through HAProxy survives its server's death as a "
          "gap and resumes its brain on another server",
          "[cluster][sim]") {
  const std::string missing = fleet_tools_missing();
  if (!missing.empty()) FIELDBRAIN_SKIP(missing);
  fleet_testing::FleetOptions fo;
  fo.servers = 2;
  fleet_testing::Fleet fleet(fo);

  namespace sim = fieldbrain::sim;
  sim::SimOptions o;
  o.server = "127.0.0.1:" + std::to_string(fleet.robot_port());
  o.framing = sim::Framing::JsonLines;
  o.robot_id = "fleet-sim";
  o.out_dir = (fleet.dir() / "sim").string();
  o.progress = false;
  o.baseline = false;
  o.hz = 20;
  o.cycles = 80;    // 4 s of cycles: the kill lands after the first save (cycle 20)
  o.timeout_s = 15;  // a dead server's connection is closed by HAProxy at once
  o.reconnect.give_up_after_s = 20;  // well past the lease (3 s) the next owner waits for
  const std::string identity = "json:" + o.robot_id;

  sim::SimReport r;
  std::thread run([&] { r = sim::run_sim(o); });
  // Killed once its brain has a save to resume from (SIGKILL: no final save).
  std::string victim;
  const bool saved = fieldbrain::test::wait_until(
      [&] {
        const auto owners = fleet.owners();
        const auto it = owners.find(identity);
        if (it == owners.end() || !json_robot_saved(fleet.dir() / "state", o.robot_id)) {
          return false;
        }
        victim = it->second;
        return true;
      },
      30.0, 50);
  if (saved) fleet.member(fleet.index_of(victim)).process->kill();
  // Who holds it next, seen while the simulator still drives it: once the run ends the robot
  // disconnects, and its new owner gives it back to the fleet after the final save, so
  // etcd may name no owner by the time run_sim returns.
  std::string successor;
  if (saved) {
    fieldbrain::test::wait_until(
        [&] {
          const auto owners = fleet.owners();
          const auto it = owners.find(identity);
          if (it == owners.end() || it->second == victim) return false;
          successor = it->second;
          return true;
        },
        30.0, 20);
  }
  run.join();  // before any REQUIRE: the run's thread must not outlive the case

  INFO("victim " << victim << "; summary:\n" << r.summary.dump(2));
  REQUIRE(saved);
  REQUIRE(r.robots.size() == 1);
  const sim::RobotReport& robot = r.robots[0];
  CHECK(r.ok());
  CHECK(robot.robot_key == o.robot_id);
  CHECK(robot.start_cycle == 0);     // a new robot: a fresh brain at first
  CHECK(robot.cycles == o.cycles);   // every cycle: the failover was a gap, not the end
  CHECK(r.summary["hz"] == 20.0);
  CHECK(r.summary["robots"][0]["reply_latency_ms"]["samples"] == o.cycles);

  const nlohmann::json& gaps = r.summary["robots"][0]["gaps"];
  REQUIRE(gaps.is_array());
  REQUIRE_FALSE(gaps.empty());
  // HAProxy may cut a connection it had sent to the dead server: a second gap at most then.
  CHECK(gaps.size() <= 2);
  CHECK(robot.reconnects == static_cast<long long>(gaps.size()));
  for (const auto& g : gaps) CHECK(g["resumed"] == true);
  const auto lost_at = gaps[0]["cycle"].get<long long>();  // the cycle whose reply never came
  const auto resumed_at = gaps[0]["brain_cycle"].get<long long>();
  CHECK(lost_at >= 20);
  CHECK(lost_at <= o.cycles - 20);  // cycles went on after the gap
  // The brain came back from its last save (every 20 cycles, written off the brain thread:
  // a few more cycles' slack), not fresh: the count goes on from there. The lost cycle itself
  // may have been answered by the dead server before it died, hence lost_at + 1.
  CHECK(resumed_at >= 20);
  CHECK(resumed_at <= lost_at + 1);
  CHECK(lost_at - resumed_at <= 20 + 5);
  CHECK(gaps[0]["seconds"].get<double>() > 0);
  CHECK(gaps[0]["attempts"].get<int>() >= 1);

  // Held by the other server after the gap, according to etcd.
  REQUIRE_FALSE(successor.empty());
  CHECK(successor != victim);
  CHECK(fleet.index_of(successor) >= 0);

  // The pictures' data shows the same gap, and cycles after it.
  const auto data = nlohmann::json::parse(
      fieldbrain::test::file_text(fleet.dir() / "sim" / "run_data.json"), nullptr, false);
  REQUIRE_FALSE(data.is_discarded());
  const nlohmann::json& trace = data["robots"][0];
  REQUIRE(trace["gaps"].size() == gaps.size());
  CHECK(trace["gaps"][0]["cycle"] == lost_at);
  CHECK(trace["gaps"][0]["brain_cycle"] == resumed_at);
  REQUIRE(trace["t"].size() == size_t(o.cycles));
  const double gap_end = trace["gaps"][0]["at_s"].get<double>() +
                         trace["gaps"][0]["seconds"].get<double>();
  long long after = 0;
  for (const auto& t : trace["t"]) after += t.get<double>() >= gap_end - 1e-3 ? 1 : 0;
  CHECK(after == o.cycles - lost_at);  // the lost cycle again, and every one after it
}
