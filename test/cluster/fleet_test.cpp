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
  REQUIRE(advance_all(robots, 30, 60) == "");
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

  INFO("the killed server: " << victim);
  REQUIRE(advance_all(moved, 20, 60) == "");
  for (FleetRobot* r : moved) {
    INFO(r->id() << " was on " << victim << "; its connections ended: " << r->endings());
    // A robot may need more than one connection to land (HAProxy cuts one that it had sent
    // to the dead server); each landing resumes the brain's last save.
    const auto gaps = r->gaps();
    REQUIRE_FALSE(gaps.empty());
    CHECK(gaps.size() <= 3);
    if (r->json()) {
      for (const ReplyGap& gap : gaps) {
        // The count goes on from the last save: save_every_cycles (20) cycles lost at most,
        // plus those answered while that save was still being written (saves are written off
        // the brain thread; 5 cycles at 50 Hz is 100 ms of writer latency on a busy machine).
        CHECK(gap.resumed_at > 0);
        CHECK(gap.resumed_at <= gap.cycle_before);
        CHECK(gap.cycle_before - gap.resumed_at <= 20 + 5);
      }
    }
  }
  CHECK(advance_all(stayed, 20, 30) == "");
  for (FleetRobot* r : stayed) {
    INFO(r->id() << " stayed on " << owners.at(r->identity()));
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

TEST_CASE("A server stopped past its lease loses its robots to the others, and once woken it "
          "serves none of them and writes none of their saves",
          "[cluster][fleet]") {
  Fleet fleet;
  auto robots = twelve_robots(fleet);
  REQUIRE(advance_all(robots, 30, 60) == "");
  const auto owners = fleet.owners();
  const auto count = robots_per_server(owners);
  const std::string victim =
      std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  const int v = fleet.index_of(victim);
  std::vector<FleetRobot*> moved;
  for (auto& r : robots) {
    if (owners.at(r->identity()) == victim) moved.push_back(r.get());
  }
  REQUIRE_FALSE(moved.empty());

  fleet.member(v).process->stop();
  REQUIRE(advance_all(moved, 20, 60) == "");  // on another server now
  for (const auto& [identity, server] : fleet.owners()) CHECK(server != victim);
  const size_t log_at_wake = fleet.log_of(v).size();
  std::map<FleetRobot*, int> connections_at_wake;
  for (FleetRobot* r : moved) connections_at_wake[r] = r->connections();

  fleet.member(v).process->resume();
  std::this_thread::sleep_for(3s);  // its lease is long gone: it must notice and let go
  CHECK(advance_all(moved, 20, 20) == "");
  for (FleetRobot* r : moved) {
    INFO(r->id());
    CHECK(r->connections() == connections_at_wake[r]);  // the woken server did not disturb it
  }
  for (const auto& [identity, server] : fleet.owners()) CHECK(server != victim);
  // What the woken server did with each robot it had: closed it without a save.
  const std::string woke = fleet.log_of(v).substr(log_at_wake);
  for (FleetRobot* r : moved) {
    const std::string key =
        r->json() ? r->id() : r->identity().substr(std::string("bin:").size());
    INFO(key << " in the woken server's log:\n" << woke);
    CHECK((woke.find(key + ": not saved: this server does not hold the robot") !=
               std::string::npos ||
           woke.find(key + ": this server no longer holds the robot in the fleet") !=
               std::string::npos));
  }
  CHECK(woke.find("resumed from") == std::string::npos);
}

TEST_CASE("While etcd is down the servers keep the robots they hold, refuse new ones with a "
          "clear error, and take new ones again once etcd is back",
          "[cluster][fleet]") {
  FleetOptions options;
  options.lease_ttl_s = 6;  // an outage of 2 s stays well inside it
  Fleet fleet(options);
  auto robots = twelve_robots(fleet);
  REQUIRE(advance_all(robots, 30, 60) == "");
  std::map<FleetRobot*, int> connections_before;
  for (auto& r : robots) connections_before[r.get()] = r->connections();

  std::map<FleetRobot*, int64_t> replies_before;
  for (auto& r : robots) replies_before[r.get()] = r->replies();
  fleet.etcd().kill();
  const auto down = std::chrono::steady_clock::now();
  // A newcomer is refused, saying why.
  RobotClient newcomer(fleet.robot_port(), 10.0, 0, "127.0.0.99");
  newcomer.send_text(R"({"type":"handshake","robot_id":"late","sensory_dim":6,"motor_dim":3})"
                     "\n");
  const auto refused = newcomer.read_line();
  REQUIRE(refused);
  CHECK_THAT(*refused, Catch::Contains("\"error\""));
  CHECK_THAT(*refused, Catch::Contains("etcd"));
  // Two seconds of etcd gone: every robot kept cycling (at 50 Hz, ~100 replies).
  std::this_thread::sleep_until(down + 2s);
  for (auto& r : robots) {
    INFO(r->id());
    CHECK(r->replies() - replies_before[r.get()] >= 40);
  }
  REQUIRE(std::chrono::steady_clock::now() - down < 4s);  // still inside the 6 s lease
  fleet.etcd().start();
  CHECK(advance_all(robots, 20, 20) == "");
  for (auto& r : robots) {
    INFO(r->id());
    CHECK(r->connections() == connections_before[r.get()]);  // nobody was dropped
    CHECK(r->gaps().empty());
  }
  // New robots are taken again (after the next lease renewal).
  bool admitted = false;
  for (int attempt = 0; attempt < 20 && !admitted; ++attempt) {
    RobotClient late(fleet.robot_port(), 10.0, 0, "127.0.0.99");
    late.send_text(R"({"type":"handshake","robot_id":"late","sensory_dim":6,"motor_dim":3})"
                   "\n");
    const auto reply = late.read_line();
    admitted = reply && reply->find("\"accepted\":true") != std::string::npos;
    if (!admitted) std::this_thread::sleep_for(500ms);
  }
  CHECK(admitted);
  // Still nobody dropped once the servers renewed their leases with the returned etcd (the
  // newcomer's admission above waited for that).
  for (auto& r : robots) {
    INFO(r->id());
    CHECK(r->connections() == connections_before[r.get()]);
    CHECK(r->gaps().empty());
  }
}

TEST_CASE("A robot's token issued through one server is checked by another", "[cluster][fleet]") {
  FleetOptions options;
  options.servers = 2;
  Fleet fleet(options);
  auto handshake = [](uint16_t port, const std::string& token) {
    RobotClient c(port, 15.0);
    nlohmann::json hs = {
        {"type", "handshake"}, {"robot_id", "rover"}, {"sensory_dim", 6}, {"motor_dim", 3}};
    if (!token.empty()) hs["token"] = token;
    c.send_text(hs.dump() + "\n");
    const auto line = c.read_line();
    REQUIRE(line);
    return nlohmann::json::parse(*line);
  };
  // Straight to s1: the first claim gets a token.
  const auto first = handshake(fleet.member(0).port, "");
  REQUIRE(first.value("accepted", false));
  const std::string token = first.value("token", "");
  REQUIRE_FALSE(token.empty());
  // Straight to s2: without it, or with another, refused; with it, s2 runs the robot.
  const auto none = handshake(fleet.member(1).port, "");
  CHECK_FALSE(none.value("accepted", false));
  CHECK(none.dump().find("2005") != std::string::npos);
  const auto wrong = handshake(fleet.member(1).port, "0123456789abcdef0123456789abcdef");
  CHECK_FALSE(wrong.value("accepted", false));
  const auto right = handshake(fleet.member(1).port, token);
  CHECK(right.value("accepted", false));
  CHECK(fleet.owners().at("json:rover") == "s2");
}
