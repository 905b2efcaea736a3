#include "app/sim/sim_run.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "app/sim/arena.h"
#include "app/sim/monitor_client.h"
#include "app/sim/plots.h"
#include "app/sim/sim_robot.h"

namespace fieldbrain::sim {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxErrorMessages = 20;

// Counters the progress line reads while robot threads write them.
struct LiveCounters {
  std::atomic<long long> cycles{0};
  std::atomic<long long> collisions{0};
  std::atomic<long long> distance_um{0};
  std::atomic<long long> abs_motor_micro{0};
  std::atomic<long long> motor_samples{0};
};

struct RobotSlot {
  std::unique_ptr<SimRobot> robot;
  std::unique_ptr<Controller> controller;  // null when the connection failed
  RobotReport report;
  LiveCounters live;
};

void record_error(RobotReport& r, const std::string& message, long long& count) {
  ++count;
  if (r.errors.size() < kMaxErrorMessages) r.errors.push_back(message);
}

// One robot's K cycles; runs on its own thread.
void drive(RobotSlot& slot, const SimOptions& o, long long& error_count) {
  SimRobot& robot = *slot.robot;
  Controller& controller = *slot.controller;
  for (long long c = 0; c < o.cycles; ++c) {
    const std::vector<float> sensors = robot.sense();
    std::optional<float> reward;
    if (o.reward) reward = progress_reward(robot.last(), robot.geometry());
    std::vector<float> motors;
    try {
      motors = controller.decide(sensors, reward);
    } catch (const std::exception& e) {
      record_error(slot.report, "cycle " + std::to_string(c) + ": " + e.what(), error_count);
      return;  // the connection is gone or out of step: stop this robot
    }
    if (controller.remote()) ++slot.report.replies;
    for (float v : motors) {
      if (!std::isfinite(v) || std::abs(v) > 1.0f) {
        record_error(slot.report,
                     "cycle " + std::to_string(c) + ": motor value " + std::to_string(v) +
                         " outside [-1, 1]",
                     error_count);
        break;
      }
    }
    const StepOutcome out = robot.act(motors);
    ++slot.report.cycles;
    slot.live.cycles.fetch_add(1, std::memory_order_relaxed);
    if (out.collided) slot.live.collisions.fetch_add(1, std::memory_order_relaxed);
    slot.live.distance_um.fetch_add(std::llround(out.moved * 1e6), std::memory_order_relaxed);
    for (float v : six_motors(motors)) {
      const double a = std::isfinite(v) ? std::min(1.0, double(std::abs(v))) : 0.0;
      slot.live.abs_motor_micro.fetch_add(std::llround(a * 1e6), std::memory_order_relaxed);
    }
    slot.live.motor_samples.fetch_add(6, std::memory_order_relaxed);
  }
}

class ProgressLine {
 public:
  ProgressLine(const std::vector<std::unique_ptr<RobotSlot>>& slots, long long target)
      : slots_(slots),
        target_(target),
        tty_(isatty(STDERR_FILENO) == 1),
        start_(std::chrono::steady_clock::now()),
        last_(start_) {}

  // Prints when due (every 0.5 s on a terminal, every 5 s in a log), or always when final.
  void tick(bool final) {
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (!final && since < (tty_ ? 0.5 : 5.0)) return;
    last_ = now;
    long long cycles = 0, collisions = 0, dist = 0, motor = 0, samples = 0;
    for (const auto& s : slots_) {
      cycles += s->live.cycles.load();
      collisions += s->live.collisions.load();
      dist += s->live.distance_um.load();
      motor += s->live.abs_motor_micro.load();
      samples += s->live.motor_samples.load();
    }
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    char line[256];
    std::snprintf(line, sizeof line,
                  "[sim] cycles %lld/%lld (%3.0f%%)  %.1f cycles/s  collisions %lld  "
                  "distance %.2f m  mean|motor| %.3f",
                  cycles, target_, target_ ? 100.0 * cycles / target_ : 0.0,
                  elapsed > 0 ? cycles / elapsed : 0.0, collisions, dist * 1e-6,
                  samples ? motor * 1e-6 / samples : 0.0);
    if (tty_) {
      std::fprintf(stderr, "\r%s\x1b[K%s", line, final ? "\n" : "");
    } else {
      std::fprintf(stderr, "%s\n", line);
    }
    std::fflush(stderr);
  }

 private:
  const std::vector<std::unique_ptr<RobotSlot>>& slots_;
  long long target_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

void validate(const SimOptions& o) {
  if (o.robots < 1 || o.robots > 64) throw std::invalid_argument("--robots must be 1..64");
  if (o.cycles < 1) throw std::invalid_argument("--cycles must be at least 1");
  if (o.controller == ControllerKind::Brain && o.server.empty()) {
    throw std::invalid_argument("the brain controller needs --server HOST:PORT");
  }
  if (!(o.px_per_m >= 10 && o.px_per_m <= 2000)) {
    throw std::invalid_argument("--px-per-m must be 10..2000");
  }
  if (o.slice_scale < 1 || o.slice_scale > 256) {
    throw std::invalid_argument("--slice-scale must be 1..256");
  }
  if (!(o.timeout_s > 0)) throw std::invalid_argument("--timeout must be positive");
}

}  // namespace

bool SimReport::ok() const {
  for (const auto& r : robots) {
    if (!r.errors.empty()) return false;
  }
  return !robots.empty();
}

SimReport run_sim(const SimOptions& o) {
  validate(o);
  const std::string arena_path = o.arena_path.empty() ? default_arena_path() : o.arena_path;
  const Arena arena = load_arena(arena_path);
  const PicarxGeometry geometry;
  fs::create_directories(o.out_dir);
  const bool brain = o.controller == ControllerKind::Brain;

  SimReport report;
  std::optional<MonitorClient> monitor;
  if (brain && !o.monitor.empty()) {
    try {
      const auto [host, port] = parse_host_port(o.monitor);
      monitor.emplace(host, port, std::min(o.timeout_s, 10.0));
      monitor->connect();
      report.monitor_reachable = true;
    } catch (const std::exception& e) {
      report.monitor_message = e.what();
      monitor.reset();
    }
  } else {
    report.monitor_message = brain ? "no --monitor given" : "not a brain run";
  }

  std::vector<std::unique_ptr<RobotSlot>> slots;
  std::vector<long long> error_counts(o.robots, 0);
  for (int i = 0; i < o.robots; ++i) {
    auto slot = std::make_unique<RobotSlot>();
    slot->report.index = i;
    const uint64_t robot_seed = o.seed * 7919u + uint64_t(i);
    slot->robot = std::make_unique<SimRobot>(
        arena, geometry, start_pose(arena, geometry, i, o.seed), robot_seed, o.noise);
    switch (o.controller) {
      case ControllerKind::Random:
        slot->controller = std::make_unique<RandomController>(robot_seed ^ 0x5eedu);
        break;
      case ControllerKind::Forward:
        slot->controller = std::make_unique<ForwardController>();
        break;
      case ControllerKind::Brain: {
        LinkOptions lo;
        std::tie(lo.host, lo.port) = parse_host_port(o.server);
        lo.framing = o.framing;
        lo.timeout_s = o.timeout_s;
        lo.robot_id = o.robot_id_prefix + "-" + std::to_string(i);
        auto link = std::make_unique<RobotLink>(lo);
        // Handshakes one at a time, so each new key on the monitor belongs to this robot.
        std::set<std::string> before;
        if (monitor && o.framing != Framing::JsonLines) {
          try {
            for (auto& k : monitor->robot_keys()) before.insert(k);
          } catch (const std::exception&) {
          }
        }
        try {
          const HandshakeReply& hs = link->connect();
          if (o.framing == Framing::JsonLines) {
            slot->report.robot_key = hs.robot_key;
          } else if (monitor) {
            for (auto& k : monitor->robot_keys()) {
              if (!before.count(k)) slot->report.robot_key = k;
            }
          }
          slot->controller = std::make_unique<BrainController>(std::move(link));
        } catch (const std::exception& e) {
          record_error(slot->report, std::string("connect: ") + e.what(), error_counts[i]);
        }
        break;
      }
    }
    slots.push_back(std::move(slot));
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<int> running{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < o.robots; ++i) {
    if (!slots[i]->controller) continue;
    ++running;
    threads.emplace_back([&, i] {
      drive(*slots[i], o, error_counts[i]);
      --running;
    });
  }
  ProgressLine progress(slots, o.cycles * o.robots);
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (o.progress) progress.tick(false);
  }
  for (auto& t : threads) t.join();
  if (o.progress) progress.tick(true);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Field slices while the robots are still connected (a brain is released on disconnect).
  if (monitor) {
    for (auto& slot : slots) {
      const std::string& key = slot->report.robot_key;
      if (key.empty() || !slot->controller) continue;
      try {
        int resolution = 0;
        const nlohmann::json brains = monitor->command("active_brains");
        for (const auto& b : brains.at("data")) {
          if (b.value("profile", "") == key) resolution = b.value("spatial_resolution", 0);
        }
        if (resolution < 1) throw LinkError("monitor does not list robot " + key);
        const int z = resolution / 2;
        for (int ch : o.slice_channels) {
          const FieldSlice s = monitor->field_slice(key, ch, z);
          const std::string name = "field_r" + std::to_string(slot->report.index) + "_c" +
                                   std::to_string(ch) + "_z" + std::to_string(z) + ".png";
          write_png(plot_field_slice(s, o.slice_scale), (fs::path(o.out_dir) / name).string());
          report.slice_files.push_back(name);
        }
      } catch (const std::exception& e) {
        report.monitor_message += std::string(report.monitor_message.empty() ? "" : "; ") +
                                  "robot " + std::to_string(slot->report.index) + ": " + e.what();
      }
    }
  }
  for (auto& slot : slots) {
    if (auto* b = dynamic_cast<BrainController*>(slot->controller.get())) b->link().close();
  }

  std::vector<std::vector<Vec2>> paths;
  for (auto& slot : slots) paths.push_back(slot->robot->path());
  report.trajectory_file = "trajectories.png";
  write_png(plot_trajectories(arena, paths, o.px_per_m),
            (fs::path(o.out_dir) / report.trajectory_file).string());

  nlohmann::json robots = nlohmann::json::array();
  long long total_cycles = 0, total_collisions = 0, total_errors = 0;
  double total_distance = 0;
  for (auto& slot : slots) {
    RobotReport& r = slot->report;
    const SimRobot& robot = *slot->robot;
    r.collisions = robot.collisions();
    r.distance_m = robot.distance();
    r.cells_visited = robot.cells_visited();
    r.mean_abs_motor = robot.mean_abs_motor();
    total_cycles += r.cycles;
    total_collisions += r.collisions;
    total_distance += r.distance_m;
    total_errors += error_counts[r.index];
    const Pose& p = robot.car().pose;
    robots.push_back(
        {{"index", r.index},
         {"robot_key", r.robot_key},
         {"cycles", r.cycles},
         {"replies", r.replies},
         {"collisions", r.collisions},
         {"distance_m", r.distance_m},
         {"cells_visited", r.cells_visited},
         {"area_m2", r.cells_visited * kExploreCell * kExploreCell},
         {"mean_abs_motor", r.mean_abs_motor},
         {"errors", error_counts[r.index]},
         {"error_messages", r.errors},
         {"final_pose",
          {{"x", p.position.x}, {"y", p.position.y}, {"heading_deg", p.heading * 180.0 / kPi}}}});
    report.robots.push_back(r);
  }
  nlohmann::json& s = report.summary;
  s = {{"arena", arena.name},
       {"arena_file", arena_path},
       {"controller", controller_name(o.controller)},
       {"framing", brain ? framing_label(o.framing) : "none"},
       {"reward", o.reward},
       {"seed", o.seed},
       {"server", brain ? o.server : ""},
       {"robots_requested", o.robots},
       {"cycles_requested", o.cycles},
       {"seconds", report.seconds},
       {"cycles_per_second", report.seconds > 0 ? total_cycles / report.seconds : 0.0},
       {"monitor",
        {{"address", o.monitor},
         {"reachable", report.monitor_reachable},
         {"message", report.monitor_message}}},
       {"trajectory_png", report.trajectory_file},
       {"trajectory_px_per_m", o.px_per_m},
       {"field_slice_pngs", report.slice_files},
       {"field_slice_scale", o.slice_scale},
       {"cell_size_m", kExploreCell},
       {"totals",
        {{"cycles", total_cycles},
         {"collisions", total_collisions},
         {"distance_m", total_distance},
         {"errors", total_errors}}},
       {"robots", robots}};
  std::ofstream out(fs::path(o.out_dir) / "summary.json");
  out << s.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write " + o.out_dir + "/summary.json");
  return report;
}

}  // namespace fieldbrain::sim
