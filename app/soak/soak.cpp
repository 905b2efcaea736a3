// fieldbrain-soak: round-trip latency (p50/p99) and robot-cycles/s of the server with the
// real brain, for 1, 4 and 16 robots at once. Each robot is a blocking framing-B client
// (the PiCar-X wire format, 12 sensors / 6 motors by default) in its own thread, lock-step as
// real robots are. Prints a table and writes JSON.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "app/server/session/server.h"
#include "app/server/engine/torch_brain_engine.h"
#include "app/cli/command_line.h"
#include "app/version/version.h"

using namespace fieldbrain::server;

namespace {

struct RunResult {
  int robots = 0;
  uint64_t cycles = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  uint64_t brain_calls = 0;
  int failures = 0;
};

// Nearest-rank percentile (the smallest sample with at least q of the samples at or below it):
// an exact order statistic over the few thousand latencies of a run, which std::nth_element
// gives in linear time. Kept by hand on purpose: a statistics library would add a dependency
// for these four lines, and torch::quantile (linked here) interpolates between samples, which
// would report latencies no frame had.
double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * v.size())) - 1);
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

RunResult run(Server& server, int robots, int sensors, int motors, double seconds, int warmup) {
  RunResult out;
  out.robots = robots;
  std::vector<std::vector<double>> lat(robots);
  std::atomic<int> failures{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::chrono::steady_clock::time_point start, end;
  std::vector<std::thread> threads;
  for (int r = 0; r < robots; ++r) {
    threads.emplace_back([&, r] {
      try {
        RobotClient c(server.port(), 60.0);
        // Distinct hardware types make distinct identities without twin suffixes.
        auto hs = c.handshake(Framing::B, {1, float(sensors), float(motors), 1, 3});
        if (!hs || hs->type != 2) throw std::runtime_error("handshake failed");
        std::vector<float> s(sensors);
        int cycle = 0;
        auto step = [&] {
          for (int i = 0; i < sensors; ++i) s[i] = 0.5f + 0.4f * std::sin(0.05f * cycle + i + r);
          ++cycle;
          auto f = c.exchange(Framing::B, s);
          if (!f || f->type != 1 || f->count != static_cast<uint32_t>(motors)) {
            throw std::runtime_error("bad reply");
          }
        };
        for (int i = 0; i < warmup; ++i) step();
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        while (std::chrono::steady_clock::now() < end) {
          const auto t0 = std::chrono::steady_clock::now();
          step();
          lat[r].push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
        }
      } catch (const std::exception& e) {
        failures.fetch_add(1);
        ready.fetch_add(1);
        spdlog::error("robot {}: {}", r, e.what());
      }
    });
  }
  while (ready.load() < robots) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const uint64_t calls0 = server.worker().brain_calls();
  start = std::chrono::steady_clock::now();
  end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds));
  go = true;
  for (auto& t : threads) t.join();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.brain_calls = server.worker().brain_calls() - calls0;
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  out.cycles = all.size();
  out.failures = failures.load();
  out.max_ms = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  out.p50_ms = percentile(all, 0.50);
  out.p99_ms = percentile(all, 0.99);
  return out;
}

// The command line.
struct SoakOptions {
  std::string config_path, out_path = "soak.json", field_step, robots_list = "1,4,16";
  int64_t resolution = 16;
  int sensors = 12, motors = 6, warmup = 10;
  double seconds = 5.0;
};

void add_soak_options(CLI::App& app, SoakOptions& o) {
  app.add_option("-c,--config", o.config_path, "server config whose brain object is used");
  app.add_option("--resolution", o.resolution, "brain resolution R")->capture_default_str();
  app.add_option("--field-step", o.field_step, "brain field_step");
  app.add_option("--robots", o.robots_list, "comma-separated robot counts")->capture_default_str();
  app.add_option("--seconds", o.seconds, "measured seconds per robot count")->capture_default_str();
  app.add_option("--warmup", o.warmup, "unmeasured cycles per robot")->capture_default_str();
  app.add_option("--sensors", o.sensors, "S")->capture_default_str();
  app.add_option("--motors", o.motors, "M")->capture_default_str();
  app.add_option("-o,--out", o.out_path, "JSON output")->capture_default_str();
}

// The config file's server, made local and quiet: an ephemeral loopback port, no monitor, no
// saves; the command line's brain overrides.
ServerConfig soak_server_config(ServerConfig config, const SoakOptions& o) {
  config.host = "127.0.0.1";
  config.port = 0;
  config.monitor_port = -1;
  config.state_dir = "";
  config.save_every_cycles = 0;
  config.log_level = "warn";
  // Every soak robot connects from 127.0.0.1: the per-address cap is the global one here.
  config.robots.max_live_brains_per_address = config.robots.max_live_brains;
  config.brain["resolution"] = o.resolution;
  if (!o.field_step.empty()) config.brain["field_step"] = o.field_step;
  return config;
}

// --robots "1,4,16" as counts; "" when every item is a count >= 1, else the message.
std::string parse_robot_counts(const std::string& list, std::vector<int>& counts) {
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || n < 1) {
      return "--robots: '" + item + "' is not a robot count (expected e.g. 1,4,16)";
    }
    counts.push_back(n);
  }
  return "";
}

// The table on stdout and the JSON document at o.out_path.
void report(const std::vector<RunResult>& results, const SoakOptions& o,
            const nlohmann::json& brain) {
  std::cout << fmt::format("fieldbrain-soak  R={}  S={} M={}  {:.1f} s per row  brain={}\n",
                           o.resolution, o.sensors, o.motors, o.seconds, brain.dump());
  std::cout << fmt::format("{:>7} {:>10} {:>14} {:>10} {:>10} {:>10} {:>13} {:>9}\n", "robots",
                           "cycles", "robot-cyc/s", "p50 ms", "p99 ms", "max ms", "robots/call",
                           "failures");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) {
    const double rate = r.seconds > 0 ? r.cycles / r.seconds : 0.0;
    const double per_call = r.brain_calls ? double(r.cycles) / r.brain_calls : 0.0;
    std::cout << fmt::format(
        "{:>7} {:>10} {:>14.1f} {:>10.3f} {:>10.3f} {:>10.3f} {:>13.2f} {:>9}\n", r.robots,
        r.cycles, rate, r.p50_ms, r.p99_ms, r.max_ms, per_call, r.failures);
    rows.push_back({{"robots", r.robots},
                    {"cycles", r.cycles},
                    {"seconds", r.seconds},
                    {"robot_cycles_per_s", rate},
                    {"p50_ms", r.p50_ms},
                    {"p99_ms", r.p99_ms},
                    {"max_ms", r.max_ms},
                    {"brain_calls", r.brain_calls},
                    {"robots_per_brain_call", per_call},
                    {"failures", r.failures}});
  }
  nlohmann::json doc = {{"benchmark", "fieldbrain-soak"},
                        {"resolution", o.resolution},
                        {"sensory_dim", o.sensors},
                        {"motor_dim", o.motors},
                        {"seconds_per_row", o.seconds},
                        {"brain", brain},
                        {"rows", rows}};
  std::ofstream(o.out_path) << doc.dump(2) << "\n";
  std::cout << "wrote " << o.out_path << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fieldbrain-soak: latency and throughput of fieldbrain-server"};
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain-soak"));
  SoakOptions o;
  add_soak_options(app, o);
  // 0 after --help/--version, 2 after a usage error, as every program (app/cli/command_line.h).
  if (const auto status = fieldbrain::cli::parse(app, argc, argv)) return *status;

  spdlog::set_level(spdlog::level::warn);
  ServerConfig config;
  try {
    if (!o.config_path.empty()) config = load_server_config(o.config_path);
  } catch (const std::exception& e) {
    return fieldbrain::cli::config_error(app, e.what());
  }
  config = soak_server_config(std::move(config), o);
  std::vector<int> counts;
  if (const std::string bad = parse_robot_counts(o.robots_list, counts); !bad.empty()) {
    return fieldbrain::cli::config_error(app, bad);
  }

  std::unique_ptr<BrainEngine> engine;
  try {
    engine = make_field_brain_engine(config.brain);
  } catch (const std::exception& e) {
    return fieldbrain::cli::config_error(app, std::string("config key 'brain': ") + e.what());
  }
  Server server(config, *engine);
  server.start();

  std::vector<RunResult> results;
  for (int n : counts) results.push_back(run(server, n, o.sensors, o.motors, o.seconds, o.warmup));
  server.stop();

  report(results, o, engine->describe());
  int failed = 0;
  for (const auto& r : results) failed += r.failures;
  return failed ? 1 : 0;
}
