// A fleet on loopback (fleet_process.h): etcd, three fieldbrain-servers sharing a state
// directory, HAProxy with deploy/haproxy.cfg, and twelve robots (JSON and binary) through it.
#include "test/support/catch.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "test/cluster/fleet_process.h"
#include "test/cluster/fleet_robot.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::cluster::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::unique_ptr<FleetRobot>> twelve_robots(const Fleet& fleet) {
  std::vector<std::unique_ptr<FleetRobot>> robots;
  for (int i = 0; i < 12; ++i) {
    const bool json = i % 2 == 0;
    // Binary robots are keyed by their sizes: each its own.
    robots.push_back(std::make_unique<FleetRobot>(fleet.robot_port(),
                                                  "127.0.0." + std::to_string(10 + i),
                                                  "robot" + std::to_string(i), json,
                                                  json ? 6 : 5 + i / 2, 3));
  }
  return robots;
}

// Every second: who owns what in etcd, so a test can check no robot was held twice and see
// where each went.
class OwnershipWatch {
 public:
  explicit OwnershipWatch(Fleet& fleet) : fleet_(fleet), thread_([this] { run(); }) {}
  ~OwnershipWatch() {
    stop_ = true;
    thread_.join();
  }
  int samples() const { return samples_.load(); }
  std::vector<std::string> problems() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return problems_;
  }

 private:
  void run() {
    while (!stop_) {
      try {
        const auto owners = fleet_.owners();
        for (const auto& [identity, server] : owners) {
          if (fleet_.index_of(server) < 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            problems_.push_back(identity + " held by unknown server " + server);
          }
        }
        ++samples_;
      } catch (const std::exception&) {
        // etcd down on purpose in some tests
      }
      std::this_thread::sleep_for(1s);
    }
  }
  Fleet& fleet_;
  std::atomic<bool> stop_{false};
  std::atomic<int> samples_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> problems_;
  std::thread thread_;
};

std::map<std::string, int> robots_per_server(const std::map<std::string, std::string>& owners) {
  std::map<std::string, int> count;
  for (const auto& [identity, server] : owners) ++count[server];
  return count;
}

}  // namespace

TEST_CASE("Twelve robots cycle through HAProxy on three servers, and when one server is killed "
          "its robots resume on the others from their last saves while the rest miss nothing",
          "[cluster][fleet]") {
  Fleet fleet;
  auto robots = twelve_robots(fleet);
  OwnershipWatch watch(fleet);
  for (auto& r : robots) {
    INFO(r->id() << " refusals: " << (r->refusals().empty() ? "" : r->refusals().front()));
    REQUIRE(r->advance(30, 60));
  }
  auto owners = fleet.owners();
  REQUIRE(owners.size() == 12);
  const auto count = robots_per_server(owners);
  CHECK(count.size() >= 2);  // source hashing spread them
  const std::string victim =
      std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;

  std::vector<FleetRobot*> moved, stayed;
  std::map<FleetRobot*, int> connections_before;
  for (auto& r : robots) {
    (owners.at(r->identity()) == victim ? moved : stayed).push_back(r.get());
    connections_before[r.get()] = r->connections();
  }
  fleet.member(fleet.index_of(victim)).process->kill();  // SIGKILL: no final save

  for (FleetRobot* r : moved) {
    INFO(r->id() << " was on " << victim << "; its connections ended: " << r->endings());
    REQUIRE(r->advance(20, 60));
    // A robot may need more than one connection to land (HAProxy cuts one that it had sent
    // to the dead server); each landing resumes the brain's last save.
    const auto gaps = r->gaps();
    REQUIRE_FALSE(gaps.empty());
    CHECK(gaps.size() <= 3);
    if (r->json()) {
      for (const ReplyGap& gap : gaps) {
        // At most save_every_cycles (20) cycles lost, and the count goes on from the save.
        CHECK(gap.resumed_at > 0);
        CHECK(gap.resumed_at <= gap.cycle_before);
        CHECK(gap.cycle_before - gap.resumed_at <= 20);
      }
    }
  }
  for (FleetRobot* r : stayed) {
    INFO(r->id() << " stayed on " << owners.at(r->identity()));
    CHECK(r->advance(20, 30));
    CHECK(r->gaps().empty());
    CHECK(r->connections() == connections_before[r]);
  }
  owners = fleet.owners();
  CHECK(owners.size() == 12);
  CHECK(owners.count(victim) == 0);
  for (const auto& [identity, server] : owners) CHECK(server != victim);
  for (auto& r : robots) {
    INFO(r->id());
    CHECK(r->problems().empty());
  }
  CHECK(watch.samples() > 3);
  CHECK(watch.problems().empty());
}
