// fieldbrain-sim: simulated PiCar-X robots driving in a 2-D arena, each talking to a
// fieldbrain server exactly as the 2025-08-20 PiCar-X client does (or driven by a baseline
// controller), and the behaviour benchmark. See app/sim/sim_run.h for the outputs.
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "app/sim/behaviour_bench.h"
#include "app/sim/sim_run.h"
#include "app/cli/command_line.h"
#include "app/version/version.h"

namespace {

// The first SIGINT/SIGTERM asks the run to stop after the current cycle (outputs are written
// for the cycles done); the handler then reverts to the default, so a second one kills.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "stored from a signal handler");

extern "C" void on_stop_signal(int signal) { stop_signal.store(signal); }

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESETHAND;  // no SA_RESTART: a blocked wait returns and sees the flag
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fieldbrain::sim;
  CLI::App app{"fieldbrain-sim: simulated PiCar-X robots for a fieldbrain server"};
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain-sim"));
  SimOptions o;
  std::string framing = "b", controller = "brain";
  bool no_progress = false, bench = false;
  double noise = 0.01;
  app.add_option("--server", o.server, "brain server robot port, HOST:PORT");
  app.add_option("--monitor", o.monitor, "monitor port HOST:PORT (field-slice pictures)");
  app.add_option("--robots", o.robots, "simulated robots, each its own connection")
      ->check(CLI::Range(1, 64));
  app.add_option("--cycles", o.cycles, "cycles per robot")->check(CLI::PositiveNumber);
  app.add_option("--out", o.out_dir, "output directory")->capture_default_str();
  app.add_option("--framing", framing, "a | b | json (b: the HEAD PiCar-X client)")
      ->capture_default_str();
  app.add_flag("--reward", o.reward, "send a reward (progress minus collisions) as value 13");
  app.add_option("--seed", o.seed, "seed for start poses, noise and the random controller")
      ->capture_default_str();
  app.add_option("--controller", controller, "brain | random | forward")->capture_default_str();
  app.add_option("--arena", o.arena_path, "arena map JSON (default configs/arena_default.json)");
  app.add_option("--timeout", o.timeout_s, "seconds to wait for each server reply")
      ->capture_default_str();
  app.add_option("--noise", noise, "sensor noise (std dev; 0 = exact readings)")
      ->capture_default_str();
  app.add_option("--hz", o.hz, "cycles per second per robot, paced like a robot (0 = unpaced)")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  app.add_option("--reconnect-for", o.reconnect.give_up_after_s,
                 "seconds a robot keeps reconnecting after a lost connection (0 = stop)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--robot-id", o.robot_id,
                 "JSON robot id (one robot) or id prefix (<id>-<i>); default sim-<i>");
  app.add_option("--token", o.token, "the JSON robot's token (--robots 1)");
  app.add_option("--tokens", o.tokens_file,
                 "file of the JSON robots' tokens, read and updated (default OUT/tokens.json)");
  bool no_baseline = false;
  app.add_flag("--no-baseline", no_baseline,
               "no random-controller run beside a brain run (for the pictures)");
  app.add_option("--server-config", o.server_config,
                 "the server's config, as the pictures state it (e.g. configs/default.json)");
  app.add_flag("--no-progress", no_progress, "no progress line");
  app.add_flag("--behaviour-bench", bench,
               "run brain (with --server) vs random vs forward and print the table");
  // 0 after --help/--version, 2 after a usage error, as every program (app/cli/command_line.h).
  if (const auto status = fieldbrain::cli::parse(app, argc, argv)) return *status;

  try {
    o.framing = parse_framing(framing);
    o.controller = parse_controller(controller);
    o.noise = SensorNoise{noise, noise / 2};
    o.progress = !no_progress;
    o.baseline = !no_baseline;
    if (bench) {
      if (o.out_dir == SimOptions{}.out_dir) o.out_dir = "behaviour-bench";
      run_behaviour_bench(o);
      return 0;
    }
    o.stop_signal = &stop_signal;
    catch_stop_signals();
    const SimReport r = run_sim(o);
    if (r.interrupted_by) {
      long long done = 0;
      for (const auto& robot : r.robots) done += robot.cycles;
      std::printf("interrupted (%s) after %lld of %lld robot-cycles; outputs are for those\n",
                  r.summary.value("interrupted_by", "a signal").c_str(), done, o.cycles * o.robots);
    }
    std::printf("summary:      %s/summary.json\n", o.out_dir.c_str());
    std::printf("run data:     %s/%s (pictures: scripts/plot_run.py %s)\n", o.out_dir.c_str(),
                r.run_data_file.c_str(), o.out_dir.c_str());
    if (o.controller == ControllerKind::Brain && !o.monitor.empty() && r.slices.empty()) {
      std::printf("field slices skipped: %s\n", r.monitor_message.c_str());
    }
    if (r.summary.contains("tokens_file")) {
      std::printf("tokens:       %s (the next run claims the same robot ids)\n",
                  r.summary["tokens_file"].get<std::string>().c_str());
    }
    const auto& totals = r.summary["totals"];
    if (o.hz > 0) {
      std::printf("pacing:       %g Hz, %lld missed deadlines\n", o.hz,
                  totals.value("missed_deadlines", 0LL));
    }
    if (totals.value("reconnects", 0LL) > 0) {
      std::printf("reconnects:   %lld (gaps in summary.json)\n", totals.value("reconnects", 0LL));
    }
    for (const auto& robot : r.robots) {
      for (const auto& e : robot.errors) {
        std::fprintf(stderr, "robot %d: %s\n", robot.index, e.c_str());
      }
    }
    if (r.interrupted_by) return 128 + r.interrupted_by;  // the shell's code, but a clean exit
    return r.ok() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldbrain-sim: %s\n", e.what());
    return 2;
  }
}
