// fieldbrain: runs N brain cycles on a synthetic PiCar-X input stream and prints cycles/s and
// the telemetry of the last cycle. With --python it also times the Python reference
// (scripts/reference/fieldbrain_ref.py) at the same R and B, so both numbers come from one
// command. `fieldbrain replay FOLDER` replays a recorded server session (docs/replay.md);
// `fieldbrain compare-original --em-brain PATH` checks the legacy profile against the user's
// em-brain (docs/legacy.md).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "app/bench/reward_schedule.h"
#include "app/cli/command_line.h"
#include "app/fieldbrain/compare_original_command.h"
#include "app/fieldbrain/picarx_stream.h"
#include "app/fieldbrain/replay_command.h"
#include "brain/brain_config.h"
#include "brain/config_reader.h"
#include "brain/field_brain.h"
#include "brain/ops/caching_allocator.h"
#include "app/version/version.h"

namespace {

using Clock = std::chrono::steady_clock;

fieldbrain::BrainConfig read_brain_config(const std::string& path) {
  const nlohmann::json j = fieldbrain::config::parse_json_file(path);  // names line and column
  // A server config holds the brain under "brain"; a bare brain config is accepted too.
  const nlohmann::json& brain = j.contains("brain") ? j.at("brain") : j;
  try {
    return brain.get<fieldbrain::BrainConfig>();
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());  // the key's error, with its file
  }
}

// Runs the Python reference's timer and returns its JSON line (empty object on failure).
nlohmann::json time_python(int64_t R, int64_t B, int64_t cycles) {
  const std::string cmd = fmt::format(
      "{} {}/scripts/reference/fieldbrain_ref.py time --R {} --B {} --cycles {} --threads {}",
      FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, R, B, cycles, torch::get_num_threads());
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string out;
  char buf[4096];
  while (fgets(buf, sizeof buf, pipe.get())) out += buf;
  auto last = out.find_last_of('{');
  if (last == std::string::npos) return {};
  try {
    return nlohmann::json::parse(out.substr(last));
  } catch (...) {
    return {};
  }
}

// What the synthetic stream feeds a brain of this S and M: a reader of the header line should
// not have to know that the default config is not a PiCar-X's.
std::string stream_note(const fieldbrain::BrainConfig& config, const std::string& config_path) {
  constexpr int64_t kPicarxSensors = 12, kPicarxMotors = 6;
  if (config.sensory_dim == kPicarxSensors && config.motor_dim == kPicarxMotors) {
    return "input: the synthetic PiCar-X stream (S = 12 sensors, M = 6 motors, as the robot)";
  }
  const std::string fit =
      config.sensory_dim > kPicarxSensors
          ? fmt::format("its 12 sensors padded with 0.5 to S = {}", config.sensory_dim)
          : fmt::format("its first S = {} of 12 sensors", config.sensory_dim);
  return fmt::format(
      "input: the synthetic PiCar-X stream, {}; M = {} motors ({} is not a PiCar-X config: "
      "--config configs/picarx.json runs the robot's S = 12, M = 6)",
      fit, config.motor_dim, config_path);
}

// The runner's own options (replay and compare-original add their subcommands).
struct RunOptions {
  std::string config_path = std::string(FIELDBRAIN_SOURCE_DIR) + "/configs/default.json";
  int64_t cycles = 200, robots = 1, resolution = 0, threads = 0;
  std::string field_step;
  bool python = false, stages = false, print_config = false, rewarded = false;
  int64_t python_cycles = 10;
};

void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--config", o.config_path, "JSON config (its \"brain\" object is used)");
  app.add_option("--cycles", o.cycles, "brain cycles to run")->check(CLI::Range(1, 10000000));
  app.add_option("--robots", o.robots, "robots in the batch (B)")->check(CLI::Range(1, 256));
  app.add_option("--resolution", o.resolution, "override the config's resolution R");
  app.add_option("--field-step", o.field_step, "override: reference | fast | script | path.pt");
  app.add_option("--threads", o.threads, "intra-op threads (default: LibTorch's choice)");
  app.add_flag("--python", o.python, "also time the Python reference at the same R and B");
  app.add_option("--python-cycles", o.python_cycles, "cycles for the Python timing");
  app.add_flag("--stages", o.stages, "print the mean host ms of each stage of the cycle");
  app.add_flag("--reward", o.rewarded,
               "send a reward every cycle (fieldbrain-bench's schedule: a sinusoid of amplitude "
               "0.5, period 64, crossing the attractor threshold 0.1 both ways)");
  app.add_flag("--print-config", o.print_config,
               "print the brain configuration this run uses (every key, JSON) and exit");
}

// The config file with the command line's overrides, validated; throws naming the key.
fieldbrain::BrainConfig run_config(const RunOptions& o) {
  fieldbrain::BrainConfig config = read_brain_config(o.config_path);
  if (o.resolution > 0) config.resolution = o.resolution;
  if (!o.field_step.empty()) config.field_step = o.field_step;
  config.validate();
  if (config.profile != fieldbrain::BrainProfile::Fieldbrain) {
    throw std::runtime_error(
        "this runner times the fieldbrain profile; for \"profile\": \"legacy\" use "
        "fieldbrain-bench --impl legacy, or fieldbrain compare-original (docs/legacy.md)");
  }
  return config;
}

// What a timed run leaves for the summary.
struct TimedRun {
  double secs = 0;
  torch::Tensor motors;  // of the last cycle
  fieldbrain::StageTotals stage_totals;
};

// Steps `brain` o.cycles times on `streams` (one per robot), printing cycles/s ten times.
TimedRun run_cycles(fieldbrain::FieldBrain& brain, std::vector<fieldbrain::PicarxStream>& streams,
                    const fieldbrain::BrainConfig& config, const RunOptions& o) {
  const int64_t robots = o.robots, cycles = o.cycles;
  auto sensors = torch::zeros({robots, config.sensory_dim});
  auto reward = torch::zeros({robots});
  TimedRun run;
  const int64_t report_every = std::max<int64_t>(1, cycles / 10);
  const auto start = Clock::now();
  for (int64_t c = 0; c < cycles; ++c) {
    auto acc = sensors.accessor<float, 2>();
    for (int64_t b = 0; b < robots; ++b) {
      auto v = streams[b].next();
      for (int64_t s = 0; s < config.sensory_dim; ++s) acc[b][s] = v[s];
    }
    for (int64_t b = 0; b < robots && o.rewarded; ++b)
      reward[b] = fieldbrain::bench::scheduled_reward(c, b);
    run.motors = brain->step(sensors, reward);
    run.stage_totals.add(brain->stage_times());
    if ((c + 1) % report_every == 0 || c + 1 == cycles) {
      double secs = std::chrono::duration<double>(Clock::now() - start).count();
      fmt::print("  cycle {:>7}/{}  {:8.2f} cycles/s\n", c + 1, cycles, (c + 1) / secs);
      std::fflush(stdout);
    }
  }
  run.secs = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

// The result line, the stage means, the last motors and the last telemetry.
void print_run(fieldbrain::FieldBrain& brain, const fieldbrain::BrainConfig& config,
               const RunOptions& o, const TimedRun& run) {
  const int64_t robots = o.robots, cycles = o.cycles;
  const double secs = run.secs, ms = 1000.0 * secs / cycles;
  // The sizes on the result line too: a loop over R greps only this line.
  fmt::print(
      "cpp_{}{}: R={} B={} threads={}: {:.2f} cycles/s, {:.3f} ms/cycle, {:.2f} robot-cycles/s\n",
      config.field_step, o.rewarded ? "_reward" : "", config.resolution, robots,
      torch::get_num_threads(), cycles / secs, ms, robots * cycles / secs);
  if (o.stages) {
    fmt::print("mean host ms per stage:\n");
    for (const auto& [name, ms] : run.stage_totals.means(cycles))
      fmt::print("  {:<20} {:9.3f}\n", name, ms);
  }
  fmt::print("motors of the last cycle (robot 0, M = {}):", config.motor_dim);
  const auto last = run.motors[0].contiguous().to(torch::kCPU, torch::kFloat);
  for (int64_t m = 0; m < last.size(0); ++m) fmt::print(" {:.6f}", last[m].item<float>());
  fmt::print("\n");
  std::cout << "telemetry of the last cycle (robot 0):\n" << brain->telemetry(0).dump(2) << "\n";
}

// --python: the Python reference timed at the same R and B, side by side with `ms`.
int compare_with_python(const fieldbrain::BrainConfig& config, const RunOptions& o, double ms) {
  fmt::print("timing the Python reference ({} cycles, R={}, B={})...\n", o.python_cycles,
             config.resolution, o.robots);
  std::fflush(stdout);
  nlohmann::json py = time_python(config.resolution, o.robots, o.python_cycles);
  if (!py.contains("ms_per_cycle")) {
    fmt::print(stderr, "python reference timing failed (is python3-torch installed?)\n");
    return 1;
  }
  const double py_ms = py.at("ms_per_cycle").get<double>();
  fmt::print("\n{:<16} {:>12} {:>12}\n", "impl", "ms/cycle", "vs python");
  fmt::print("{:<16} {:>12.2f} {:>11.2f}x\n", "python", py_ms, 1.0);
  fmt::print("{:<16} {:>12.2f} {:>11.2f}x\n", "cpp_" + config.field_step, ms, py_ms / ms);
  return 0;
}

// The timed run: a brain of o.robots robots, its cycles, the summary, and --python's table.
int run_timed(const fieldbrain::BrainConfig& config, const RunOptions& o) {
  // A cycle creates the same tensors every time: serve them from a pool (no malloc, no page
  // faults in steady state; brain/ops/caching_allocator.h).
  fieldbrain::ops::CachingCpuAllocator::install();
  if (o.threads > 0) torch::set_num_threads(static_cast<int>(o.threads));

  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < o.robots; ++b) keys.push_back(static_cast<uint64_t>(b));
  fieldbrain::FieldBrain brain(config, keys);
  brain->set_stage_timing(o.stages);
  std::vector<fieldbrain::PicarxStream> streams;
  for (int64_t b = 0; b < o.robots; ++b) streams.emplace_back(config.sensory_dim, config.seed + b);
  fmt::print("fieldbrain: R={} S={} M={} B={} field_step={} threads={}, {} cycles\n",
             config.resolution, config.sensory_dim, config.motor_dim, o.robots, config.field_step,
             torch::get_num_threads(), o.cycles);
  fmt::print("{}\n", stream_note(config, o.config_path));
  const TimedRun run = run_cycles(brain, streams, config, o);
  print_run(brain, config, o, run);
  if (!o.python) return 0;
  return compare_with_python(config, o, 1000.0 * run.secs / o.cycles);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fieldbrain: run brain cycles on a synthetic PiCar-X stream"};
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain"));
  RunOptions options;
  add_run_options(app, options);
  fieldbrain::ReplayCommand replay;
  fieldbrain::add_replay_command(app, replay);
  fieldbrain::CompareOriginalCommand compare;
  fieldbrain::add_compare_original_command(app, compare);
  // --help and --version exit 0, usage errors 2 (with the nearest flag for an unknown one), as
  // in every program (app/cli/command_line.h).
  if (const auto status = fieldbrain::cli::parse(app, argc, argv)) return *status;
  if (*replay.sub) return fieldbrain::run_replay_command(replay);
  if (*compare.sub) return fieldbrain::run_compare_original_command(compare);

  fieldbrain::BrainConfig config;
  try {
    config = run_config(options);
  } catch (const std::exception& e) {
    return fieldbrain::cli::config_error(app, e.what());
  }
  if (options.print_config) {
    std::cout << nlohmann::json(config).dump(2) << "\n";
    return 0;
  }
  try {
    return run_timed(config, options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "fieldbrain: error: {}\n", e.what());
    return 1;
  }
}
