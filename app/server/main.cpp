// fieldbrain-server: parses the config and flags, checks them (startup_checks.h: the brain
// config, a trial brain on the configured device and field step, the state directory) before
// any port opens, serves until SIGINT/SIGTERM, then answers the frames in flight, saves every
// robot and exits 0. When serving it prints one JSON line on stdout (the ready line: version,
// pid, the bound ports; also written to --ready-file). Bad configuration (a damaged
// identities.json included) exits 2 with a message naming the key, and so does a state
// directory another server holds (state_dir_lock.h); a robot whose final save
// failed, or a failed write of identities.json, makes it exit 3.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/server/cluster/fleet_gate.h"
#include "app/server/engine/torch_brain_engine.h"
#include "app/server/server_cli.h"
#include "app/server/session/server.h"
#include "app/server/web/web_monitor.h"
#include "app/server/worker/startup_checks.h"
#include "app/server/worker/state_dir_lock.h"
#include "app/version/version.h"
#include "brain/brain_config.h"

namespace {

using namespace fieldbrain::server;

// Written whole or not at all (a temporary file renamed), so a script polling for it never
// reads half a line.
void write_ready_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write the ready file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot write the ready file " + path);
  }
}

// --print-config: the whole effective config, the brain object as the brain reads it, every
// default filled in, not only the keys the file and flags gave.
int print_config(const CliOutcome& cli) {
  nlohmann::json effective = cli.config;
  try {
    effective["brain"] = cli.config.brain.get<fieldbrain::BrainConfig>();
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: "
              << (cli.config_path.empty() ? std::string() : cli.config_path + ": ") << e.what()
              << "\n";
    return 2;
  }
  std::cout << effective.dump(2) << "\n";
  return 0;
}

// Logs on stderr (docs/server.md), so stdout carries only the ready line.
void start_logging(const ServerConfig& config) {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::info("fieldbrain-server {}", fieldbrain::version());
}

// What is checked before any port opens; throws saying why the server must not start.
struct Prepared {
  std::unique_ptr<BrainEngine> engine;
  std::unique_ptr<StateDirLock> state_lock;  // held until main returns, after the final saves
};

Prepared prepare(const CliOutcome& cli) {
  Prepared p;
  try {
    p.engine = make_field_brain_engine(cli.config.brain);
  } catch (const std::exception& e) {
    // The brain keys are read here, not with the file: name the file like its other keys.
    throw std::runtime_error((cli.config_path.empty() ? std::string() : cli.config_path + ": ") +
                             e.what());
  }
  run_startup_checks(cli.config, *p.engine);
  // One server alone per state directory; fleet servers share theirs (etcd decides).
  p.state_lock = std::make_unique<StateDirLock>(
      cli.config.state_dir,
      cli.config.cluster.enabled() ? StateDirLock::Mode::kFleet : StateDirLock::Mode::kAlone);
  return p;
}

// Fleet mode (docs/fleet.md): join before the first robot is accepted (the caller leaves after
// the last save), so no robot runs here without this server holding it in etcd. Null when the
// server runs alone; throws when the fleet cannot be joined.
std::unique_ptr<cluster::FleetGate> join_fleet(const ServerConfig& config) {
  if (!config.cluster.enabled()) return nullptr;
  const auto& c = config.cluster;
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  const std::string id = !c.server_id.empty()
                             ? c.server_id
                             : std::string(host) + ":" +
                                   (config.port != 0 ? std::to_string(config.port)
                                                     : "pid" + std::to_string(::getpid()));
  auto fleet = std::make_unique<cluster::FleetGate>(
      c, id, std::string(host) + ":" + std::to_string(config.port), config.robots);
  fleet->start();
  return fleet;
}

// For scripts and supervisors: one JSON line on stdout (and in --ready-file), with the ports
// actually bound (--port 0 picks a free one), instead of a log line to scrape.
void announce_ready(const CliOutcome& cli, Server& server, const web::WebMonitor& web_monitor) {
  const nlohmann::json ready = {
      {"ready", true},
      {"version", fieldbrain::version()},
      {"pid", ::getpid()},
      {"port", server.port()},
      {"monitor_port", cli.config.monitor_port < 0 ? -1 : int{server.monitor_port()}},
      {"web_port", web_monitor.enabled() ? int{web_monitor.port()} : -1}};
  std::cout << ready.dump() << std::endl;
  if (!cli.ready_file.empty()) write_ready_file(cli.ready_file, ready.dump() + "\n");
}

// After the final saves: 3 when a robot's final save failed (it comes back older than it
// left) or an identity could not be stored (refused, not lost, but the disk needs attention).
int exit_status(Server& server) {
  int status = 0;
  const auto unsaved = server.worker().unsaved();
  if (!unsaved.empty()) {
    std::string names;
    for (const auto& key : unsaved) names += (names.empty() ? "" : ", ") + key;
    spdlog::critical("final save failed for {} robot(s): {}; their latest state is lost",
                     unsaved.size(), names);
    status = 3;
  }
  if (const uint64_t failed = server.worker().identity_write_failures(); failed > 0) {
    spdlog::critical(
        "writing identities.json failed {} time(s) (those handshakes were "
        "refused); check the state disk",
        failed);
    status = 3;
  }
  return status;
}

// Serves until SIGINT or SIGTERM, then answers the frames in flight and saves every robot.
int serve(const CliOutcome& cli, BrainEngine& engine, cluster::FleetGate* fleet) {
  Server server(cli.config, engine, fleet);
  // On every way out of this block (an exception too): the server stops (its robots saved
  // while this server still holds them), then the fleet's admission threads, which call the
  // server's worker back, finish before the server is destroyed.
  struct LeaveFleetFirst {
    Server& server;
    cluster::FleetGate* gate;
    ~LeaveFleetFirst() {
      if (!gate) return;
      server.stop();
      gate->stop();
    }
  } leave_fleet_first{server, fleet};
  web::WebMonitor web_monitor(server);  // web_port; off by default
  // Block the signals in this thread before any other thread starts would be the POSIX
  // way; Asio's signal_set handles delivery to whichever thread and queues it for us.
  boost::asio::io_context signals_io;
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
  int received = 0;
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (!ec) received = sig;
  });
  server.start();
  web_monitor.start();
  spdlog::info("ready; brain {}", engine.describe().dump());
  announce_ready(cli, server, web_monitor);
  signals_io.run();
  spdlog::info("signal {} received", received);
  server.stop();
  web_monitor.stop();
  if (fleet) fleet->stop();  // after the final saves: the robots are free for the fleet
  return exit_status(server);
}

}  // namespace

int main(int argc, char** argv) {
  const CliOutcome cli = parse_server_cli(argc, argv);
  if (cli.exit_code >= 0) return cli.exit_code;
  if (cli.print_config) return print_config(cli);
  start_logging(cli.config);
  Prepared prepared;
  try {
    prepared = prepare(cli);
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: refusing to start: " << e.what() << "\n";
    return 2;
  }
  std::unique_ptr<cluster::FleetGate> fleet;
  try {
    fleet = join_fleet(cli.config);
  } catch (const std::exception& e) {
    std::cerr << "fieldbrain-server: refusing to start: cluster.etcd: cannot join fleet '"
              << cli.config.cluster.name << "': " << e.what() << "\n";
    return 2;
  }
  try {
    return serve(cli, *prepared.engine, fleet.get());
  } catch (const std::exception& e) {
    spdlog::critical("fieldbrain-server: {}", e.what());
    return 1;
  }
}
