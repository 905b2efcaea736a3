// A real etcd for the [cluster] tests: started on free loopback ports with its own data folder,
// stopped (SIGKILL) at destruction. scripts/setup.sh installs etcd-server.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/server/cluster/etcd_client.h"
#include "test/support/child_process.h"
#include "test/support/files.h"
#include "test/support/free_port.h"

namespace fieldbrain::server::cluster::testing {

using fieldbrain::test::free_port;

inline std::string etcd_binary() {
  for (const char* p : {"/usr/bin/etcd", "/usr/local/bin/etcd"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  throw std::runtime_error("etcd is not installed (scripts/setup.sh installs etcd-server)");
}

class EtcdProcess {
 public:
  EtcdProcess() : client_port_(free_port()), peer_port_(free_port()) {
    dir_ = std::filesystem::temp_directory_path() /
           ("fieldbrain-etcd-" + std::to_string(::getpid()) + "-" + std::to_string(client_port_));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    try {
      start();
    } catch (...) {
      kill();
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      throw;
    }
  }
  ~EtcdProcess() {
    kill();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Starts it (again, on the same ports and data) and waits until it answers.
  void start() {
    const std::string client = "http://127.0.0.1:" + std::to_string(client_port_);
    const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
    std::vector<std::string> args = {etcd_binary(),
                                     "--name=test",
                                     "--data-dir=" + (dir_ / "data").string(),
                                     "--listen-client-urls=" + client,
                                     "--advertise-client-urls=" + client,
                                     "--listen-peer-urls=" + peer,
                                     "--initial-advertise-peer-urls=" + peer,
                                     "--initial-cluster=test=" + peer,
                                     "--logger=zap"};
    process_ = std::make_unique<fieldbrain::test::ChildProcess>(
        args, (dir_ / "etcd.out").string(), /*append=*/true);
    if (process_->pid <= 0) throw std::runtime_error("could not start etcd");
    const std::string log = (dir_ / "etcd.out").string();
    EtcdClient probe(options(std::chrono::milliseconds(300)));
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < end) {
      try {
        probe.get("/probe");
        return;
      } catch (const std::exception&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    std::string said = fieldbrain::test::file_text(log);
    if (said.size() > 800) said = "..." + said.substr(said.size() - 800);
    throw std::runtime_error("etcd did not answer within 20 s; it said: " + said);
  }
  void kill() { process_.reset(); }
  void pause() { process_->stop(); }
  void resume() { process_->resume(); }

  EtcdOptions options(std::chrono::milliseconds timeout = std::chrono::milliseconds(500)) const {
    EtcdOptions o;
    o.endpoints = {EtcdEndpoint{"127.0.0.1", client_port_}};
    o.timeout = timeout;
    return o;
  }
  uint16_t client_port() const { return client_port_; }

 private:
  uint16_t client_port_;
  uint16_t peer_port_;
  std::filesystem::path dir_;
  std::unique_ptr<fieldbrain::test::ChildProcess> process_;
};

}  // namespace fieldbrain::server::cluster::testing
