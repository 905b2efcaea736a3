#include "app/sim/sim_run.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "app/sim/arena.h"
#include "app/sim/monitor_client.h"
#include "app/sim/run_trace.h"
#include "app/sim/sim_robot.h"

namespace fieldbrain::sim {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxErrorMessages = 20;
// run_data.json keeps at most this many cycles per robot (about 50 MB of JSON); longer runs
// keep their first cycles only.
constexpr long long kMaxTracedCycles = 200000;
// How often the main thread samples each brain's confidence through the monitor.
constexpr double kConfidenceEvery_s = 0.25;

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
  RobotTrace trace;  // written by the robot's thread only; read after it has joined
  Vec2 start;        // where the robot began (net displacement = start to final pose)
};

void record_error(RobotReport& r, const std::string& message, long long& count) {
  ++count;
  if (r.errors.size() < kMaxErrorMessages) r.errors.push_back(message);
}

// One robot's K cycles; runs on its own thread.
void drive(RobotSlot& slot, const SimOptions& o, long long& error_count) {
  SimRobot& robot = *slot.robot;
  Controller& controller = *slot.controller;
  const auto stopping = [&] { return o.stop_signal && o.stop_signal->load() != 0; };
  for (long long c = 0; c < o.cycles && !stopping(); ++c) {
    const std::vector<float> sensors = robot.sense();
    std::optional<float> reward;
    if (o.reward) reward = progress_reward(robot.last(), robot.geometry());
    std::vector<float> motors;
    try {
      motors = controller.decide(sensors, reward);
    } catch (const std::exception& e) {
      // After a Ctrl-C the server (same terminal) may close first: that is the stop, not an error.
      if (!stopping()) {
        record_error(slot.report, "cycle " + std::to_string(c) + ": " + e.what(), error_count);
      }
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
    if (c < kMaxTracedCycles) {
      CycleSample s;
      const Pose& p = robot.car().pose;
      s.x = float(p.position.x);
      s.y = float(p.position.y);
      s.heading = float(p.heading);
      const std::vector<float> six = six_motors(motors);
      std::copy(six.begin(), six.end(), s.motors.begin());
      s.reward = reward.value_or(0.0f);
      s.collided = out.collided;
      slot.trace.cycles.push_back(s);
    }
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
  if (!(o.timeout_s > 0)) throw std::invalid_argument("--timeout must be positive");
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal";
  }
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
    slot->trace.cycles.reserve(size_t(std::min(o.cycles, kMaxTracedCycles)));
    const uint64_t robot_seed = o.seed * 7919u + uint64_t(i);
    slot->robot = std::make_unique<SimRobot>(
        arena, geometry, start_pose(arena, geometry, i, o.seed), robot_seed, o.noise);
    slot->start = slot->robot->car().pose.position;
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
  auto last_sample = std::chrono::steady_clock::now();
  std::vector<std::vector<ConfidenceSample>> confidence(slots.size());
  auto sample_confidence = [&] {
    for (size_t i = 0; i < slots.size(); ++i) {
      const std::string& key = slots[i]->report.robot_key;
      if (key.empty() || !slots[i]->controller) continue;
      try {
        const nlohmann::json t = monitor->command("telemetry " + key).at("data");
        const long long cycle = slots[i]->live.cycles.load(std::memory_order_relaxed);
        if (t.contains("prediction_confidence") && cycle > 0) {
          confidence[i].push_back({cycle, t.at("prediction_confidence").get<float>()});
        }
      } catch (const std::exception&) {
        // A sample lost is a gap in one curve; the run goes on.
      }
    }
  };
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (o.progress) progress.tick(false);
    const auto now = std::chrono::steady_clock::now();
    if (monitor && std::chrono::duration<double>(now - last_sample).count() >= kConfidenceEvery_s) {
      sample_confidence();
      last_sample = now;
    }
  }
  for (auto& t : threads) t.join();
  if (monitor) sample_confidence();
  for (size_t i = 0; i < slots.size(); ++i) slots[i]->trace.confidence = std::move(confidence[i]);
  if (o.progress) progress.tick(true);
  if (o.stop_signal) report.interrupted_by = o.stop_signal->load();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Field slices while the robots are still connected (a brain is released on disconnect).
  std::vector<SliceRecord> slices;
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
          slices.push_back({slot->report.index, monitor->field_slice(key, ch, z)});
          report.slices.push_back("r" + std::to_string(slot->report.index) + " c" +
                                  std::to_string(ch) + " z" + std::to_string(z));
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

  {
    std::vector<std::string> keys;
    std::vector<RobotTrace> traces;
    for (auto& slot : slots) {
      keys.push_back(slot->report.robot_key);
      traces.push_back(std::move(slot->trace));
    }
    report.run_data_file = "run_data.json";
    std::ofstream data(fs::path(o.out_dir) / report.run_data_file);
    data << run_data(arena, keys, traces, slices).dump() << "\n";
    if (!data) throw std::runtime_error("cannot write " + o.out_dir + "/" + report.run_data_file);
  }

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
         {"displacement_m", std::hypot(p.position.x - slot->start.x, p.position.y - slot->start.y)},
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
       {"interrupted_by", report.interrupted_by ? nlohmann::json(signal_name(report.interrupted_by))
                                                : nlohmann::json()},
       {"seconds", report.seconds},
       {"cycles_per_second", report.seconds > 0 ? total_cycles / report.seconds : 0.0},
       {"monitor",
        {{"address", o.monitor},
         {"reachable", report.monitor_reachable},
         {"message", report.monitor_message}}},
       {"run_data", report.run_data_file},
       {"field_slices", report.slices},
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
