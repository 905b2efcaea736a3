// The fleet's figures for docs/fleet.md, as hidden test cases that print tables (they measure,
// they assert only that the fleet worked):
//   build/bin/fieldbrain-tests-cluster "[.fleet-bench]"              all three
//   build/bin/fieldbrain-tests-cluster "[.fleet-bench][failover]"    20 SIGKILLs
//   ... [latency]: HAProxy's added round trip; [throughput]: 1, 2 and 3 servers.
#include "test/support/catch.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "test/cluster/fleet_process.h"
#include "test/cluster/fleet_robot.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::cluster::testing;
using namespace std::chrono_literals;

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, size_t(p / 100.0 * double(v.size() - 1) + 0.5));
  return v[i];
}

std::vector<std::unique_ptr<FleetRobot>> robots_for(const Fleet& fleet, int n,
                                                    std::chrono::milliseconds pace) {
  std::vector<std::unique_ptr<FleetRobot>> robots;
  for (int i = 0; i < n; ++i) {
    const bool json = i % 2 == 0;
    robots.push_back(std::make_unique<FleetRobot>(
        fleet.robot_port(), "127.0.0." + std::to_string(10 + i), "robot" + std::to_string(i), json,
        json ? 6 : 5 + i / 2, 3, pace));
  }
  return robots;
}

}  // namespace

TEST_CASE("Fleet failover: 20 SIGKILLs of the busiest server", "[.fleet-bench][failover]") {
  FleetOptions options;  // lease 3 s, renewal 0.5 s, a save every 20 cycles, R = 8
  Fleet fleet(options);
  auto robots = robots_for(fleet, 12, 20ms);
  for (auto& r : robots) REQUIRE(r->advance(30, 60));
  std::vector<double> failover_s, lost_cycles;
  int moved_total = 0, extra_reconnects = 0;
  for (int kill = 0; kill < 20; ++kill) {
    const auto owners = fleet.owners();
    std::map<std::string, int> count;
    for (const auto& [identity, server] : owners) ++count[server];
    const std::string victim =
        std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    const int v = fleet.index_of(victim);
    std::map<FleetRobot*, size_t> gaps_before;
    for (auto& r : robots) {
      if (owners.count(r->identity()) && owners.at(r->identity()) == victim) {
        gaps_before[r.get()] = r->gaps().size();
      }
    }
    fleet.member(v).process->kill();
    for (auto& [r, before] : gaps_before) {
      REQUIRE(r->advance(10, 60));
      const auto gaps = r->gaps();
      REQUIRE(gaps.size() > before);
      failover_s.push_back(gaps[before].seconds());
      if (r->json()) lost_cycles.push_back(double(gaps[before].cycle_before - gaps[before].resumed_at));
      extra_reconnects += int(gaps.size() - before - 1);
      ++moved_total;
    }
    fleet.start_server(v);
    fleet.settle();
    std::printf("kill %2d: %s held %d robots\n", kill + 1, victim.c_str(), int(gaps_before.size()));
  }
  std::printf("\nfailover over 20 SIGKILLs (%d robots moved; lease 3 s, renewal 0.5 s):\n"
              "  last reply before the kill -> first reply after: p50 %.2f s, p90 %.2f s, "
              "p99 %.2f s, max %.2f s\n"
              "  cycles lost (JSON robots, save every 20): p50 %.0f, max %.0f\n"
              "  robots that needed a second landing: %d\n",
              moved_total, percentile(failover_s, 50), percentile(failover_s, 90),
              percentile(failover_s, 99), percentile(failover_s, 100), percentile(lost_cycles, 50),
              percentile(lost_cycles, 100), extra_reconnects);
  for (auto& r : robots) CHECK(r->problems().empty());
}

TEST_CASE("Fleet latency: a round trip through HAProxy against one straight to a server",
          "[.fleet-bench][latency]") {
  Fleet fleet;
  auto round_trips = [](uint16_t port, const std::string& id, int n) {
    RobotClient c(port, 10.0, 0, "127.0.0.50");
    c.send_text(R"({"type":"handshake","robot_id":")" + id +
                R"(","sensory_dim":6,"motor_dim":3})" + "\n");
    REQUIRE(c.read_line());
    std::vector<double> ms;
    const std::string frame = R"({"type":"sensors","values":[0.1,0.2,0.3,0.4,0.5,0.6]})" "\n";
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      c.send_text(frame);
      REQUIRE(c.read_line());
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    return ms;
  };
  std::vector<double> direct, proxied;
  for (int block = 0; block < 5; ++block) {  // interleaved, so load changes hit both alike
    auto d = round_trips(fleet.member(0).port, "direct" + std::to_string(block), 200);
    auto p = round_trips(fleet.robot_port(), "proxied" + std::to_string(block), 200);
    direct.insert(direct.end(), d.begin() + 20, d.end());
    proxied.insert(proxied.end(), p.begin() + 20, p.end());
  }
  std::printf("\nround trip, JSON robot, R = 8, %zu cycles each:\n"
              "  straight to a server: p50 %.3f ms, p99 %.3f ms\n"
              "  through HAProxy:      p50 %.3f ms, p99 %.3f ms\n"
              "  added by HAProxy:     p50 %.3f ms, p99 %.3f ms\n",
              direct.size(), percentile(direct, 50), percentile(direct, 99),
              percentile(proxied, 50), percentile(proxied, 99),
              percentile(proxied, 50) - percentile(direct, 50),
              percentile(proxied, 99) - percentile(direct, 99));
}

TEST_CASE("Fleet throughput: robot-cycles per second with 1, 2 and 3 servers",
          "[.fleet-bench][throughput]") {
  std::vector<double> rates;
  for (int servers = 1; servers <= 3; ++servers) {
    FleetOptions options;
    options.servers = servers;
    options.resolution = 16;
    options.save_every_cycles = 1000;
    Fleet fleet(options);
    auto robots = robots_for(fleet, 12, 0ms);  // as fast as the servers answer
    for (auto& r : robots) REQUIRE(r->advance(20, 120));
    std::this_thread::sleep_for(2s);
    int64_t before = 0;
    for (auto& r : robots) before += r->replies();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(10s);
    int64_t after = 0;
    for (auto& r : robots) after += r->replies();
    rates.push_back(double(after - before) /
                    std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("\nrobot-cycles/s, 12 robots through HAProxy, R = 16, this machine (%u cores):\n",
              std::thread::hardware_concurrency());
  for (int i = 0; i < 3; ++i) {
    std::printf("  %d server%s: %8.1f  (%.2fx one server)\n", i + 1, i ? "s" : " ", rates[i],
                rates[i] / rates[0]);
  }
}
