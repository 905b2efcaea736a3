#include "app/sim/sim_run.h"

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
#include "app/sim/baseline_run.h"
#include "app/sim/cycle_pacer.h"
#include "app/sim/latency_stats.h"
#include "app/sim/monitor_client.h"
#include "app/sim/progress_line.h"
#include "app/sim/run_trace.h"
#include "app/sim/sim_robot.h"

namespace fieldbrain::sim {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxErrorMessages = 20;
// run_data.json keeps at most this many cycles per robot (about 50 MB of JSON); longer runs
// keep their first cycles only.
constexpr long long kMaxTracedCycles = 200000;
// How often the main thread samples each brain's confidence through the monitor.
constexpr double kConfidenceEvery_s = 0.25;
// How long a binary robot's key may take to show on the monitor after its handshake (its
// brain is listed once loaded; a big save takes a second or two).
constexpr double kKeyWait_s = 10.0;

struct RobotSlot {
  std::unique_ptr<SimRobot> robot;
  std::unique_ptr<Controller> controller;  // null when the connection failed
  RobotReport report;
  LiveCounters live;
  RobotTrace trace;  // written by the robot's thread only; read after it has joined
  Vec2 start;        // where the robot began (net displacement = start to final pose)
  long long error_count = 0;
};

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void record_error(RobotSlot& slot, const std::string& message) {
  ++slot.error_count;
  if (slot.report.errors.size() < kMaxErrorMessages) slot.report.errors.push_back(message);
}

// After a lost connection: reconnects (brain runs with reconnection on) and records the gap.
// True when the robot goes on.
bool recover(RobotSlot& slot, long long cycle, const std::string& cause, double at_s,
             const std::function<bool()>& stopping) {
  auto* brain = dynamic_cast<BrainController*>(slot.controller.get());
  if (!brain || brain->link().policy().give_up_after_s <= 0) {
    record_error(slot, "cycle " + std::to_string(cycle) + ": " + cause);
    return false;
  }
  slot.live.reconnecting.store(1);
  const ReconnectOutcome r = brain->link().reconnect(stopping);
  slot.live.reconnecting.store(0);
  LinkGap gap;
  gap.cycle = cycle;
  gap.at_s = at_s;
  gap.seconds = r.seconds;
  gap.attempts = r.attempts;
  gap.resumed = r.ok;
  gap.cause = cause;
  if (r.ok) gap.brain_cycle = brain->link().handshake().cycle;
  slot.trace.gaps.push_back(gap);
  if (r.ok) {
    ++slot.report.reconnects;
    return true;
  }
  if (!stopping()) {
    char why[160];
    std::snprintf(why, sizeof why, "; no reconnection in %.1f s (%d attempts)", r.seconds,
                  r.attempts);
    record_error(slot, "cycle " + std::to_string(cycle) + ": " + cause + why +
                           (r.last_error.empty() ? "" : ", the last: " + r.last_error));
  }
  return false;
}

void record_cycle(RobotSlot& slot, long long c, const std::vector<float>& motors,
                  std::optional<float> reward, const StepOutcome& out, float latency_ms,
                  float t) {
  if (c < kMaxTracedCycles) {
    CycleSample s;
    const Pose& p = slot.robot->car().pose;
    s.x = float(p.position.x);
    s.y = float(p.position.y);
    s.heading = float(p.heading);
    const std::vector<float> six = six_motors(motors);
    std::copy(six.begin(), six.end(), s.motors.begin());
    s.reward = reward.value_or(0.0f);
    s.collided = out.collided;
    s.latency_ms = latency_ms;
    s.t = t;
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

// One robot's K cycles; runs on its own thread.
void drive(RobotSlot& slot, const SimOptions& o, Clock::time_point t0) {
  SimRobot& robot = *slot.robot;
  Controller& controller = *slot.controller;
  const std::function<bool()> stopping = [&] {
    return o.stop_signal && o.stop_signal->load() != 0;
  };
  CyclePacer pacer(o.hz);
  for (long long c = 0; c < o.cycles && !stopping();) {
    pacer.wait(stopping);
    if (stopping()) break;
    const std::vector<float> sensors = robot.sense();
    std::optional<float> reward;
    if (o.reward) reward = progress_reward(robot.last(), robot.geometry());
    std::vector<float> motors;
    const auto asked = Clock::now();
    try {
      motors = controller.decide(sensors, reward);
    } catch (const std::exception& e) {
      // After a Ctrl-C the server (same terminal) may close first: that is the stop, not an error.
      if (stopping()) return;
      if (!recover(slot, c, e.what(), seconds_between(t0, asked), stopping)) return;
      pacer.restart();  // a gap is not a run of missed deadlines
      continue;         // this cycle again, with the sensors of now
    }
    const auto answered = Clock::now();
    if (controller.remote()) ++slot.report.replies;
    for (float v : motors) {
      if (!std::isfinite(v) || std::abs(v) > 1.0f) {
        record_error(slot, "cycle " + std::to_string(c) + ": motor value " + std::to_string(v) +
                               " outside [-1, 1]");
        break;
      }
    }
    const StepOutcome out = robot.act(motors);
    const float latency_ms =
        controller.remote() ? float(1e3 * seconds_between(asked, answered)) : 0.0f;
    record_cycle(slot, c, motors, reward, out, latency_ms, float(seconds_between(t0, answered)));
    if (pacer.done()) ++slot.report.missed_deadlines;
    ++c;
  }
}

void validate(const SimOptions& o) {
  if (o.robots < 1 || o.robots > 64) throw std::invalid_argument("--robots must be 1..64");
  if (o.cycles < 1) throw std::invalid_argument("--cycles must be at least 1");
  if (o.controller == ControllerKind::Brain && o.server.empty()) {
    throw std::invalid_argument("the brain controller needs --server HOST:PORT");
  }
  if (!(o.timeout_s > 0)) throw std::invalid_argument("--timeout must be positive");
  if (!(o.hz >= 0) || o.hz > 10000) throw std::invalid_argument("--hz must be 0..10000");
  if (!(o.reconnect.give_up_after_s >= 0)) {
    throw std::invalid_argument("--reconnect-for must be 0 or more seconds");
  }
  if (!o.token.empty() && o.robots != 1) {
    throw std::invalid_argument(
        "--token is one robot's: run --robots 1 (several robots keep theirs in the tokens file)");
  }
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

// The monitor's keys, or none when it does not answer (the caller then says why).
std::set<std::string> monitor_keys(MonitorClient& monitor) {
  std::set<std::string> keys;
  for (auto& k : monitor.robot_keys()) keys.insert(k);
  return keys;
}

// A binary robot's key: the one key that appeared on the monitor since its handshake (the
// handshakes are made one at a time). "" with `note` saying why when none did.
std::string new_key(MonitorClient& monitor, const std::set<std::string>& before,
                    std::string& note) {
  const auto end = Clock::now() + std::chrono::duration<double>(kKeyWait_s);
  try {
    do {
      for (const auto& k : monitor_keys(monitor)) {
        if (!before.count(k)) return k;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (Clock::now() < end);
    note = "no new robot showed on the monitor within " + std::to_string(int(kKeyWait_s)) +
           " s of this robot's handshake (its brain still loading, or it took over a brain "
           "already listed)";
  } catch (const std::exception& e) {
    note = std::string("the monitor did not list the robots: ") + e.what();
  }
  return "";
}

// Connects robot `i`'s brain controller (or records why it could not). A binary robot's
// key is resolved afterwards (resolve_key), once its thread is cycling.
void connect_brain(RobotSlot& slot, int i, const SimOptions& o, RobotTokens& tokens) {
  LinkOptions lo;
  std::tie(lo.host, lo.port) = parse_host_port(o.server);
  lo.framing = o.framing;
  lo.timeout_s = o.timeout_s;
  lo.robot_id = json_robot_id(o, i);
  auto link = std::make_unique<BrainConnection>(lo, tokens, o.reconnect);
  try {
    const HandshakeReply& hs = link->connect();
    slot.report.start_cycle = hs.cycle;
    if (o.framing == Framing::JsonLines) {
      slot.report.robot_key = hs.robot_key;
    } else if (o.monitor.empty()) {
      slot.report.key_note = "binary robots are keyed by the server: known through --monitor only";
    }
    slot.controller = std::make_unique<BrainController>(std::move(link));
  } catch (const std::exception& e) {
    record_error(slot, std::string("connect: ") + e.what());
    slot.report.key_note = "not connected";
  }
}

std::vector<std::unique_ptr<RobotSlot>> make_robots(const SimOptions& o, const Arena& arena) {
  const PicarxGeometry geometry;
  std::vector<std::unique_ptr<RobotSlot>> slots;
  for (int i = 0; i < o.robots; ++i) {
    auto slot = std::make_unique<RobotSlot>();
    slot->report.index = i;
    slot->trace.cycles.reserve(size_t(std::min(o.cycles, kMaxTracedCycles)));
    const uint64_t seed = robot_seed(o.seed, i);
    slot->robot = std::make_unique<SimRobot>(arena, geometry, start_pose(arena, geometry, i, o.seed),
                                             seed, o.noise);
    slot->start = slot->robot->car().pose.position;
    switch (o.controller) {
      case ControllerKind::Random:
        slot->controller = std::make_unique<RandomController>(random_controller_seed(seed));
        slot->report.key_note = "not a brain run";
        break;
      case ControllerKind::Forward:
        slot->controller = std::make_unique<ForwardController>();
        slot->report.key_note = "not a brain run";
        break;
      case ControllerKind::Brain:
        break;  // connected one at a time by run_robots
    }
    slots.push_back(std::move(slot));
  }
  return slots;
}

// Connects the robots one at a time and starts each one's thread at once (a robot that
// waited idle for the others' handshakes would look silent to the server, which may then
// hand its brain to the next one), then waits for them all, sampling confidence through the
// monitor meanwhile. A binary robot's key is the one new key the monitor lists after its
// handshake, so the next robot connects only once it is known.
void run_robots(std::vector<std::unique_ptr<RobotSlot>>& slots, const SimOptions& o,
                RobotTokens& tokens, std::optional<MonitorClient>& monitor,
                Clock::time_point t0) {
  std::atomic<int> running{0};
  std::vector<std::thread> threads;
  const bool brain = o.controller == ControllerKind::Brain;
  const bool binary_keys = brain && monitor && o.framing != Framing::JsonLines;
  for (size_t i = 0; i < slots.size(); ++i) {
    RobotSlot* s = slots[i].get();
    std::set<std::string> before;
    std::string note;
    if (binary_keys) {
      try {
        before = monitor_keys(*monitor);
      } catch (const std::exception& e) {
        note = std::string("the monitor did not list the robots: ") + e.what();
      }
    }
    if (brain) connect_brain(*s, int(i), o, tokens);
    if (!s->controller) continue;
    ++running;
    threads.emplace_back([&, s] {
      drive(*s, o, t0);
      --running;
    });
    if (binary_keys) {
      if (note.empty()) s->report.robot_key = new_key(*monitor, before, note);
      s->report.key_note = note;
    }
  }
  std::vector<const LiveCounters*> live;
  for (auto& slot : slots) live.push_back(&slot->live);
  ProgressLine progress(live, o.cycles * o.robots);
  auto last_sample = Clock::now();
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
    const auto now = Clock::now();
    if (monitor && seconds_between(last_sample, now) >= kConfidenceEvery_s) {
      sample_confidence();
      last_sample = now;
    }
  }
  for (auto& t : threads) t.join();
  if (monitor) sample_confidence();
  for (size_t i = 0; i < slots.size(); ++i) slots[i]->trace.confidence = std::move(confidence[i]);
  if (o.progress) progress.tick(true);
}

void add_note(std::string& notes, const std::string& note) {
  notes += (notes.empty() ? "" : "; ") + note;
}

// Field slices while the robots are still connected (a brain is released on disconnect).
// Also reads what the server runs (R, profile, device) into `brain`.
std::vector<SliceRecord> fetch_slices(std::vector<std::unique_ptr<RobotSlot>>& slots,
                                      const SimOptions& o, MonitorClient& monitor,
                                      SimReport& report, nlohmann::json& brain) {
  std::vector<SliceRecord> slices;
  for (auto& slot : slots) {
    const std::string robot = "robot " + std::to_string(slot->report.index) + ": ";
    const std::string& key = slot->report.robot_key;
    if (!slot->controller) {
      add_note(report.monitor_message, robot + "not connected");
      continue;
    }
    if (key.empty()) {
      add_note(report.monitor_message, robot + "its key on the server is unknown (" +
                                           slot->report.key_note + ")");
      continue;
    }
    try {
      int resolution = 0;
      const nlohmann::json brains = monitor.command("active_brains");
      for (const auto& b : brains.at("data")) {
        if (b.value("profile", "") != key) continue;
        resolution = b.value("spatial_resolution", 0);
        if (brain.is_null()) {
          brain = b.value("brain", nlohmann::json::object());
          brain["resolution"] = resolution;
          if (!brain.contains("device")) brain["device"] = b.value("device", "");
        }
      }
      if (resolution < 1) throw LinkError("monitor does not list robot " + key);
      const int z = resolution / 2;
      for (int ch : o.slice_channels) {
        slices.push_back({slot->report.index, monitor.field_slice(key, ch, z)});
        report.slices.push_back("r" + std::to_string(slot->report.index) + " c" +
                                std::to_string(ch) + " z" + std::to_string(z));
      }
    } catch (const std::exception& e) {
      add_note(report.monitor_message, robot + e.what());
    }
  }
  return slices;
}

nlohmann::json robot_summary(const RobotSlot& slot, const SimOptions& o) {
  const RobotReport& r = slot.report;
  const Pose& p = slot.robot->car().pose;
  std::vector<float> latencies;
  for (const CycleSample& s : slot.trace.cycles) {
    if (s.latency_ms > 0) latencies.push_back(s.latency_ms);
  }
  nlohmann::json gaps = nlohmann::json::array();
  double gap_s = 0;
  for (const LinkGap& g : slot.trace.gaps) {
    gap_s += g.seconds;
    gaps.push_back({{"cycle", g.cycle},
                    {"seconds", g.seconds},
                    {"attempts", g.attempts},
                    {"resumed", g.resumed},
                    {"brain_cycle", g.brain_cycle},
                    {"cause", g.cause}});
  }
  const bool brain = o.controller == ControllerKind::Brain;
  return {{"index", r.index},
          {"robot_key", r.robot_key},
          {"robot_key_note", r.key_note},
          {"start_cycle", brain && o.framing == Framing::JsonLines ? nlohmann::json(r.start_cycle)
                                                                   : nlohmann::json()},
          {"cycles", r.cycles},
          {"replies", r.replies},
          {"collisions", r.collisions},
          {"distance_m", r.distance_m},
          {"displacement_m", std::hypot(p.position.x - slot.start.x, p.position.y - slot.start.y)},
          {"cells_visited", r.cells_visited},
          {"area_m2", r.cells_visited * kExploreCell * kExploreCell},
          {"mean_abs_motor", r.mean_abs_motor},
          {"reply_latency_ms", latency_summary(std::move(latencies))},
          {"missed_deadlines", o.hz > 0 ? nlohmann::json(r.missed_deadlines) : nlohmann::json()},
          {"reconnects", r.reconnects},
          {"gap_seconds", gap_s},
          {"gaps", gaps},
          {"errors", slot.error_count},
          {"error_messages", r.errors},
          {"final_pose",
           {{"x", p.position.x}, {"y", p.position.y}, {"heading_deg", p.heading * 180.0 / kPi}}}};
}

nlohmann::json baseline_summary(const std::vector<BaselineRobot>& baseline) {
  nlohmann::json robots = nlohmann::json::array();
  long long collisions = 0;
  double area = 0, distance = 0;
  for (size_t i = 0; i < baseline.size(); ++i) {
    const BaselineRobot& b = baseline[i];
    const double a = b.cells_visited * kExploreCell * kExploreCell;
    robots.push_back({{"index", i},
                      {"cycles", b.cycles},
                      {"collisions", b.collisions},
                      {"distance_m", b.distance_m},
                      {"area_m2", a}});
    collisions += b.collisions;
    area += a;
    distance += b.distance_m;
  }
  return {{"controller", "random"},
          {"robots", robots},
          {"totals", {{"collisions", collisions}, {"distance_m", distance}, {"area_m2", area}}}};
}

void write_json(const fs::path& path, const nlohmann::json& j, int indent) {
  std::ofstream out(path);
  out << j.dump(indent) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

std::string json_robot_id(const SimOptions& o, int index) {
  if (o.robot_id.empty()) return "sim-" + std::to_string(index);
  return o.robots == 1 ? o.robot_id : o.robot_id + "-" + std::to_string(index);
}

bool SimReport::ok() const {
  for (const auto& r : robots) {
    if (!r.errors.empty()) return false;
  }
  return !robots.empty();
}

namespace {

void open_monitor(const SimOptions& o, SimReport& report, std::optional<MonitorClient>& monitor) {
  const bool brain = o.controller == ControllerKind::Brain;
  if (!brain || o.monitor.empty()) {
    report.monitor_message = brain ? "no --monitor given" : "not a brain run";
    return;
  }
  try {
    const auto [host, port] = parse_host_port(o.monitor);
    monitor.emplace(host, port, std::min(o.timeout_s, 10.0));
    monitor->connect();
    report.monitor_reachable = true;
  } catch (const std::exception& e) {
    report.monitor_message = std::string("monitor unreachable: ") + e.what();
    monitor.reset();
  }
}

nlohmann::json summary_json(const std::vector<std::unique_ptr<RobotSlot>>& slots,
                            const SimOptions& o, const SimReport& report,
                            const std::string& arena_name, const std::string& arena_path,
                            const nlohmann::json& run_info) {
  const bool brain = o.controller == ControllerKind::Brain;
  nlohmann::json robots = nlohmann::json::array();
  long long total_cycles = 0, total_collisions = 0, total_errors = 0, missed = 0, reconnects = 0;
  double total_distance = 0;
  for (const auto& slot : slots) {
    robots.push_back(robot_summary(*slot, o));
    total_cycles += slot->report.cycles;
    total_collisions += slot->report.collisions;
    total_distance += slot->report.distance_m;
    total_errors += slot->error_count;
    missed += slot->report.missed_deadlines;
    reconnects += slot->report.reconnects;
  }
  return {{"arena", arena_name},
          {"arena_file", arena_path},
          {"controller", controller_name(o.controller)},
          {"framing", brain ? framing_label(o.framing) : "none"},
          {"reward", o.reward},
          {"seed", o.seed},
          {"server", brain ? o.server : ""},
          {"run", run_info},
          {"robots_requested", o.robots},
          {"cycles_requested", o.cycles},
          {"hz", o.hz > 0 ? nlohmann::json(o.hz) : nlohmann::json()},
          {"interrupted_by", report.interrupted_by
                                 ? nlohmann::json(signal_name(report.interrupted_by))
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
            {"errors", total_errors},
            {"missed_deadlines", o.hz > 0 ? nlohmann::json(missed) : nlohmann::json()},
            {"reconnects", reconnects}}},
          {"robots", robots}};
}

}  // namespace

SimReport run_sim(const SimOptions& o) {
  validate(o);
  const std::string arena_path = o.arena_path.empty() ? default_arena_path() : o.arena_path;
  const Arena arena = load_arena(arena_path);
  fs::create_directories(o.out_dir);
  const bool brain = o.controller == ControllerKind::Brain;
  const std::string tokens_path =
      o.tokens_file.empty() ? (fs::path(o.out_dir) / "tokens.json").string() : o.tokens_file;
  RobotTokens tokens(brain && o.framing == Framing::JsonLines ? tokens_path : "");
  if (!o.token.empty()) tokens.provide(json_robot_id(o, 0), o.token);

  SimReport report;
  std::optional<MonitorClient> monitor;
  open_monitor(o, report, monitor);
  std::vector<std::unique_ptr<RobotSlot>> slots = make_robots(o, arena);
  const auto t0 = Clock::now();
  run_robots(slots, o, tokens, monitor, t0);
  if (o.stop_signal) report.interrupted_by = o.stop_signal->load();
  report.seconds = seconds_between(t0, Clock::now());

  nlohmann::json server_brain;
  std::vector<SliceRecord> slices;
  if (monitor) slices = fetch_slices(slots, o, *monitor, report, server_brain);
  for (auto& slot : slots) {
    if (auto* b = dynamic_cast<BrainController*>(slot->controller.get())) b->link().close();
  }
  for (auto& slot : slots) {
    RobotReport& r = slot->report;
    r.collisions = slot->robot->collisions();
    r.distance_m = slot->robot->distance();
    r.cells_visited = slot->robot->cells_visited();
    r.mean_abs_motor = slot->robot->mean_abs_motor();
  }
  // What ran, as every picture states it.
  const nlohmann::json run_info = {
      {"controller", controller_name(o.controller)},
      {"server_brain", server_brain},
      {"server_config", o.server_config},
      {"hz", o.hz > 0 ? nlohmann::json(o.hz) : nlohmann::json()},
      {"seed", o.seed},
      {"framing", brain ? framing_label(o.framing) : "none"},
      {"reward", o.reward}};
  {
    std::vector<std::string> keys;
    std::vector<RobotTrace> traces;
    std::vector<long long> cycles;
    for (auto& slot : slots) {
      keys.push_back(slot->report.robot_key);
      cycles.push_back(slot->report.cycles);
    }
    std::optional<std::vector<BaselineRobot>> baseline;
    if (brain && o.baseline) {
      baseline = run_random_baseline(arena, o.seed, o.noise, o.reward, cycles, kMaxTracedCycles);
    }
    for (auto& slot : slots) traces.push_back(std::move(slot->trace));
    nlohmann::json data = run_data(arena, keys, traces, slices);
    data["run"] = run_info;
    if (baseline) {
      nlohmann::json robots = nlohmann::json::array();
      for (size_t i = 0; i < baseline->size(); ++i) {
        nlohmann::json t = trace_json((*baseline)[i].trace);
        t["index"] = i;
        robots.push_back(std::move(t));
      }
      data["baseline"] = {{"controller", "random"}, {"robots", robots}};
    }
    report.run_data_file = "run_data.json";
    write_json(fs::path(o.out_dir) / report.run_data_file, data, -1);
    // The traces moved out above; the summary needs the latencies and gaps back.
    for (size_t i = 0; i < slots.size(); ++i) slots[i]->trace = std::move(traces[i]);
    report.summary = summary_json(slots, o, report, arena.name, arena_path, run_info);
    if (baseline) report.summary["baseline"] = baseline_summary(*baseline);
  }
  if (!tokens.path().empty()) report.summary["tokens_file"] = tokens.path();
  for (auto& slot : slots) report.robots.push_back(slot->report);
  write_json(fs::path(o.out_dir) / "summary.json", report.summary, 2);
  return report;
}

}  // namespace fieldbrain::sim
