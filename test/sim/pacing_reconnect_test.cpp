// Issue 40 item 2: a simulated robot paced like a robot (--hz: the run takes its time, the
// summary has the reply latency and the missed deadlines) and one that survives its server:
// the server stopped and started again on the same address shows in the run as a gap, the
// robot reconnecting with back-off and its brain resumed from the server's final save.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <memory>
#include <thread>

#include "app/sim/monitor_client.h"
#include "app/sim/sim_run.h"
#include "test/sim/sim_server.h"
#include "test/support/catch.h"
#include "test/support/skip.h"
#include "test/support/wait_until.h"

using namespace fieldbrain::sim;
using namespace fieldbrain::sim::testing;
using fieldbrain::test::wait_until;
namespace fs = std::filesystem;

namespace {

SimOptions json_robot(const SimTestServer& server, const fs::path& out) {
  SimOptions o;
  o.server = server.server();
  o.framing = Framing::JsonLines;
  o.robots = 1;
  o.out_dir = out.string();
  o.progress = false;
  o.timeout_s = 30;
  o.baseline = false;
  return o;
}

// The cycle the server's monitor reports for robot `key` (-1 while it is not listed). One
// monitor connection, remade only when it fails (the server limits connections per address).
class CycleWatch {
 public:
  explicit CycleWatch(const SimTestServer& server) : server_(server) {}
  long long cycle(const std::string& key) {
    try {
      if (!monitor_) {
        const auto [host, port] = parse_host_port(server_.monitor());
        monitor_ = std::make_unique<MonitorClient>(host, port, 5.0);
        monitor_->connect();
      }
      const nlohmann::json brains = monitor_->command("active_brains");  // outlives the loop
      for (const auto& b : brains.at("data")) {
        if (b.value("profile", "") == key) return b.value("cycle", -1LL);
      }
    } catch (const std::exception&) {
      monitor_.reset();
    }
    return -1;
  }

 private:
  const SimTestServer& server_;
  std::unique_ptr<MonitorClient> monitor_;
};

}  // namespace

TEST_CASE("A run with --hz is paced like a robot and the summary has its latency and missed deadlines",
          "[sim][pacing]") {
  const fs::path dir = sim_test_dir("fieldbrain-sim-pacing");
  SimOptions o;
  o.controller = ControllerKind::Forward;
  o.cycles = 20;
  o.progress = false;
  o.out_dir = dir.string();
  o.hz = 100;
  const SimReport paced = run_sim(o);
  // 20 cycles at 100 Hz: 19 periods between the first cycle's start and the last's.
  CHECK(paced.seconds >= 0.19);
  CHECK(paced.summary["hz"] == 100.0);
  CHECK(paced.summary["totals"]["missed_deadlines"].is_number());
  CHECK(paced.summary["robots"][0]["reply_latency_ms"].is_null());  // no server, no reply
  o.hz = 0;
  const SimReport unpaced = run_sim(o);
  CHECK(unpaced.summary["hz"].is_null());
  CHECK(unpaced.summary["totals"]["missed_deadlines"].is_null());

  if (!sim_test_server_built()) FIELDBRAIN_SKIP("fieldbrain-server is not in this build");
  SimTestServer server(dir / "server");
  if (!server.start()) FAIL("the server did not start:\n" << server.log());
  SimOptions b = json_robot(server, dir / "brain");
  b.cycles = 15;
  b.hz = 10000;  // a 0.1 ms period: no reply through a socket and a brain step comes that fast
  const SimReport fast = run_sim(b);
  INFO(fast.summary.dump(2));
  REQUIRE(fast.ok());
  const auto& latency = fast.summary["robots"][0]["reply_latency_ms"];
  REQUIRE(latency.is_object());
  CHECK(latency["samples"] == 15);
  CHECK(latency["p50"].get<double>() > 0.1);
  CHECK(latency["max"].get<double>() >= latency["p95"].get<double>());
  CHECK(fast.robots[0].missed_deadlines >= 10);
  CHECK(fast.summary["totals"]["missed_deadlines"] == fast.robots[0].missed_deadlines);
  // The same robot at 50 Hz: its 10 cycles take 9 periods at least.
  b.hz = 50;
  b.cycles = 10;
  const SimReport slow = run_sim(b);
  REQUIRE(slow.ok());
  CHECK(slow.seconds >= 0.18);
  CHECK(slow.summary["cycles_per_second"].get<double>() <= 50 * 1.2);
  CHECK(server.stop() == 0);
  fs::remove_all(dir);
}

TEST_CASE("A robot reconnects across a server restart: a gap in its run, not its end",
          "[sim][reconnect]") {
  if (!sim_test_server_built()) FIELDBRAIN_SKIP("fieldbrain-server is not in this build");
  const fs::path dir = sim_test_dir("fieldbrain-sim-reconnect");
  SimTestServer server(dir / "server");
  if (!server.start()) FAIL("the server did not start:\n" << server.log());
  SimOptions o = json_robot(server, dir / "out");
  o.cycles = 50;
  o.hz = 25;  // 2 s of cycles around the restart
  o.reconnect.give_up_after_s = 20;
  SimReport r;
  std::thread run([&] { r = run_sim(o); });
  CycleWatch watch(server);
  const bool cycling = wait_until([&] { return watch.cycle("sim-0") >= 10; }, 30.0, 50);
  const int stopped = server.stop();  // SIGTERM: the server saves the robot's brain and exits
  const bool restarted = server.start();
  run.join();
  INFO("summary:\n" << r.summary.dump(2));
  REQUIRE(cycling);
  CHECK(stopped == 0);
  REQUIRE(restarted);
  CHECK(r.ok());
  REQUIRE(r.robots.size() == 1);
  CHECK(r.robots[0].cycles == 50);  // every cycle, the gap between them
  CHECK(r.robots[0].reconnects == 1);
  const auto& gaps = r.summary["robots"][0]["gaps"];
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0]["resumed"] == true);
  CHECK(gaps[0]["attempts"].get<int>() >= 1);
  CHECK(gaps[0]["seconds"].get<double>() > 0);
  // The new server resumed the brain from the final save, with the token the run kept.
  CHECK(gaps[0]["brain_cycle"].get<long long>() >= 10);
  CHECK(r.robots[0].robot_key == "sim-0");

  {  // with no server to come back to, reconnection gives up and says so
    SimOptions g = o;
    g.out_dir = (dir / "gives-up").string();
    g.tokens_file = (dir / "out" / "tokens.json").string();  // the same robot, its token
    g.cycles = 1000;
    g.reconnect.give_up_after_s = 0.5;
    SimReport lost;
    std::thread run2([&] { lost = run_sim(g); });
    CycleWatch watch2(server);
    const bool again = wait_until([&] { return watch2.cycle("sim-0") >= 60; }, 30.0, 50);
    server.stop();
    run2.join();
    REQUIRE(again);
    REQUIRE(lost.robots.size() == 1);
    REQUIRE(lost.robots[0].errors.size() == 1);
    CHECK_THAT(lost.robots[0].errors[0], Catch::Contains("no reconnection in"));
    CHECK(lost.robots[0].cycles < 1000);
  }
  server.stop();
  fs::remove_all(dir);
}
