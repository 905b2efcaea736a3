// A fleet on loopback for the [cluster] tests: etcd, N fieldbrain-server processes sharing one
// state directory, and HAProxy in front with the shipped deploy/haproxy.cfg. Everything is
// started by the constructor (bounded waits) and killed by the destructor.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/server/protocol/robot_client.h"
#include "test/cluster/etcd_process.h"
#include "test/support/child_process.h"
#include "test/support/files.h"

namespace fieldbrain::server::cluster::testing {

using Child = fieldbrain::test::ChildProcess;

struct FleetOptions {
  int servers = 3;
  int64_t lease_ttl_s = 3;
  double renew_every_s = 0.5;
  int64_t save_every_cycles = 20;
  int resolution = 8;
};

class Fleet {
 public:
  struct Member {
    std::string id;
    uint16_t port = 0;
    uint16_t web_port = 0;
    std::filesystem::path log;
    std::unique_ptr<Child> process;
  };

  explicit Fleet(FleetOptions options = {}) : options_(options) {
    dir_ = std::filesystem::temp_directory_path() /
           ("fieldbrain-fleet-" + std::to_string(::getpid()) + "-" +
            std::to_string(etcd_.client_port()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "state");
    for (int i = 0; i < options_.servers; ++i) {
      auto m = std::make_unique<Member>();
      m->id = "s" + std::to_string(i + 1);
      m->port = free_port();
      m->web_port = free_port();
      m->log = dir_ / (m->id + ".log");
      members_.push_back(std::move(m));
    }
    for (int i = 0; i < options_.servers; ++i) start_server(i);
    robot_port_ = free_port();
    stats_port_ = free_port();
    start_haproxy();
  }
  ~Fleet() {
    haproxy_.reset();
    members_.clear();
    std::error_code ec;
    if (!std::getenv("FIELDBRAIN_KEEP_FLEET")) std::filesystem::remove_all(dir_, ec);
  }

  // (Re)starts server i on its ports and waits for its ready file.
  void start_server(int i) {
    Member& m = *members_[i];
    const auto ready = dir_ / (m.id + ".ready");
    std::filesystem::remove(ready);
    m.process = std::make_unique<Child>(
        std::vector<std::string>{
            FIELDBRAIN_SERVER_EXE, "--host", "127.0.0.1", "--port", std::to_string(m.port),
            "--monitor-port", "-1", "--state-dir", (dir_ / "state").string(), "--ready-file",
            ready.string(), "--cluster", "test", "--etcd",
            "http://127.0.0.1:" + std::to_string(etcd_.client_port()), "--server-id", m.id,
            "--save-every", std::to_string(options_.save_every_cycles), "--resolution", std::to_string(options_.resolution),
            "--field-step", "fast", "--set", "web_port=" + std::to_string(m.web_port), "--set",
            "cluster.lease_ttl_s=" + std::to_string(options_.lease_ttl_s), "--set",
            "cluster.renew_every_s=" + std::to_string(options_.renew_every_s), "--set",
            "cluster.etcd_timeout_s=0.4", "--set", "robots.takeover_after_s=1", "--set",
            "handshake_timeout_s=30"},
        m.log.string(), /*append=*/true);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < end) {
      if (std::filesystem::exists(ready) && std::filesystem::file_size(ready) > 0) return;
      if (!m.process->alive()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    throw std::runtime_error(m.id + " did not start: " + fieldbrain::test::file_text(m.log));
  }

  EtcdProcess& etcd() { return etcd_; }
  // The fleet's folder: the servers' shared state directory (state/) and every log; removed
  // with the fleet, so a test can keep its own outputs there too.
  const std::filesystem::path& dir() const { return dir_; }
  Member& member(int i) { return *members_[i]; }
  // Waits until HAProxy's checks could have marked a restarted server up again (rise 2 x 500 ms).
  void settle() const { std::this_thread::sleep_for(std::chrono::milliseconds(1500)); }
  int size() const { return int(members_.size()); }
  uint16_t robot_port() const { return robot_port_; }
  std::string log_of(int i) const { return fieldbrain::test::file_text(members_[i]->log); }
  // Which server holds each robot now, from etcd: identity -> server id.
  std::map<std::string, std::string> owners() {
    EtcdClient client(etcd_.options());
    std::map<std::string, std::string> out;
    const std::string prefix = "/fieldbrain/test/robots/";
    for (const auto& kv : client.list(prefix)) out[kv.key.substr(prefix.size())] = kv.value;
    return out;
  }
  int index_of(const std::string& id) const {
    for (int i = 0; i < size(); ++i) {
      if (members_[i]->id == id) return i;
    }
    return -1;
  }

 private:
  void start_haproxy() {
    auto set = [](const char* k, const std::string& v) { ::setenv(k, v.c_str(), 1); };
    set("FLEET_LISTEN", "127.0.0.1:" + std::to_string(robot_port_));
    set("FLEET_STATS", "127.0.0.1:" + std::to_string(stats_port_));
    for (int i = 0; i < 3; ++i) {
      // Fewer than three servers: the extra lines point at a closed port, always down.
      const Member* m = i < size() ? members_[i].get() : nullptr;
      set(("FLEET_S" + std::to_string(i + 1)).c_str(),
          "127.0.0.1:" + std::to_string(m ? m->port : free_port()));
      set(("FLEET_W" + std::to_string(i + 1)).c_str(),
          std::to_string(m ? m->web_port : free_port()));
    }
    const auto log = dir_ / "haproxy.log";
    haproxy_ = std::make_unique<Child>(
        std::vector<std::string>{"/usr/sbin/haproxy", "-db", "-f",
                                 std::string(FIELDBRAIN_SOURCE_DIR) + "/deploy/haproxy.cfg"},
        log.string(), /*append=*/true);
    // Up once it accepts and a health check has marked the servers up (rise 2 x 500 ms).
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < end) {
      try {
        RobotClient probe(robot_port_, 1.0);
        if (probe.connected()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          return;
        }
      } catch (const std::exception&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error("haproxy did not start: " + fieldbrain::test::file_text(log));
  }

  FleetOptions options_;
  EtcdProcess etcd_;
  std::filesystem::path dir_;
  std::vector<std::unique_ptr<Member>> members_;
  std::unique_ptr<Child> haproxy_;
  uint16_t robot_port_ = 0;
  uint16_t stats_port_ = 0;
};

}  // namespace fieldbrain::server::cluster::testing
