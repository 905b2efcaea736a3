// fieldbrain-bench [--device cpu|cuda] [--quick] [--json PATH]: the fused field step vs the
// reference field step vs an 8 MiB-per-robot copy (the memory roofline of the device), the
// reference's field_step in Python (eager, and through torch.compile where the local torch
// has it), and whole cycles of the C++ reference path, the C++ fast path and the Python
// reference (CPU), the same C++ cycles with a reward every cycle (cpp_fast_reward,
// cpp_reference_reward: app/bench/reward_schedule.h; after the table, each beside its plain
// row), the server's tick over B robots (a resident BrainGroup: group, group_churn;
// the single brains of before: tick_singles), at R in {16, 32, 64} x B in {1, 4, 16} (--quick:
// R = 32, B in {1, 4}); the legacy profile's cycle beside the original em-brain's (rows legacy,
// python_original with --em-brain PATH) at B = 1, R <= 32. After the table, robot-cycles/s at
// each B beside B = 1's. Every row but the Python cycle runs on --device (CUDA rows timed with
// CUDA events). Prints a table; --json writes {"rows": [...]}, each row with its "device".
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/bench/bench_report.h"
#include "app/bench/bench_rows.h"
#include "app/bench/device_timer.h"
#include "app/bench/legacy_thread_rows.h"
#include "brain/brain_config.h"
#include "brain/ops/caching_allocator.h"
#include "app/cli/command_line.h"
#include "app/version/version.h"

using namespace fieldbrain::bench;

namespace {

const std::vector<std::string> kAllImpls = {
    "copy",          "field_step_op", "field_step_seeded",    "philox_fill",
    "field_step_reference", "field_readout_op", "python_eager", "torch_compile",
    "cpp_fast",      "cpp_reference", "python",               "load",
    "cpp_fast_reward", "cpp_reference_reward",
    "group",         "group_churn",   "tick_singles",         "legacy",
    "python_original", "legacy_tick", "legacy_threads"};

// Python reference cycles to time: ~1 s per robot-cycle at R = 32, x8 per doubling of R.
int64_t python_cycles(int64_t B, int64_t R) {
  const double est_s = 1.0 * B * (R * R * R) / (32.0 * 32 * 32);
  return std::clamp<int64_t>(static_cast<int64_t>(6.0 / std::max(est_s, 1e-3)), 2, 20);
}

// The command line.
struct BenchOptions {
  bool quick = false;
  std::string json_path;
  std::vector<int64_t> Rs, Bs;
  std::vector<std::string> impls;
  double seconds = 2.0;
  int threads = 0;
  bool no_pool = false;
  int64_t sensory_dim = fieldbrain::BrainConfig{}.sensory_dim;
  int64_t motor_dim = fieldbrain::BrainConfig{}.motor_dim;
  std::string em_brain;
  std::string device_name = "cpu";
};

void add_bench_options(CLI::App& app, BenchOptions& o) {
  app.add_flag("--quick", o.quick, "R = 32, B in {1, 4}, short budgets (< 2 min)");
  app.add_option("--json", o.json_path, "write the rows as JSON to this file");
  app.add_option("--R", o.Rs, "resolutions (default 16 32 64)");
  app.add_option("--B", o.Bs, "batch sizes (default 1 4 16)");
  app.add_option("--impl", o.impls, "rows to run (default all)")->check(CLI::IsMember(kAllImpls));
  app.add_option("--seconds", o.seconds, "time budget per row (default 2; --quick 1)");
  app.add_option("--threads", o.threads, "intra-op threads (default: every hardware thread)");
  app.add_option("--device", o.device_name, "cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option(
      "--em-brain", o.em_brain,
      "an em-brain checkout (ef2bdb8): times the original's cycle (row python_original)");
  app.add_flag("--no-pool", o.no_pool,
               "keep c10's default CPU allocator (every tensor buffer is a malloc)");
  app.add_option("--sensory-dim", o.sensory_dim, "S of the cycle rows' brains (PiCar-X: 12)")
      ->capture_default_str();
  app.add_option("--motor-dim", o.motor_dim, "M of the cycle rows' brains (PiCar-X: 6)")
      ->capture_default_str();
}

// The defaults that depend on --quick, and every row when --impl is not given.
void apply_defaults(const CLI::App& app, BenchOptions& o) {
  if (o.quick) {
    if (o.Rs.empty()) o.Rs = {32};
    if (o.Bs.empty()) o.Bs = {1, 4};
    if (app.count("--seconds") == 0) o.seconds = 1.0;
  }
  if (o.Rs.empty()) o.Rs = {16, 32, 64};
  if (o.Bs.empty()) o.Bs = {1, 4, 16};
  if (o.impls.empty()) o.impls = kAllImpls;
}

// The time budgets: the slow rows (reference field step and cycles) get fewer iterations.
struct Budgets {
  RowBudget fast, slow;
};

Budgets row_budgets(const BenchOptions& o) {
  Budgets b;
  b.fast.seconds = o.seconds;
  b.fast.min_iterations = o.quick ? 2 : 3;
  b.slow = b.fast;
  b.slow.min_iterations = o.quick ? 1 : 2;
  return b;
}

// Every wanted row at one R and B, appended to `rows` (a row that fails is reported and left out).
void run_rows(torch::Device device, int64_t R, int64_t B, const BenchOptions& o,
              const Budgets& budgets, std::vector<BenchRow>& rows) {
  const std::set<std::string> want(o.impls.begin(), o.impls.end());
  const RowBudget& budget = budgets.fast;
  const RowBudget& slow = budgets.slow;
  const bool quick = o.quick;
  const std::string& em_brain = o.em_brain;
  auto run = [&](const std::string& impl, auto fn) {
    if (!want.count(impl)) return;
    fmt::print(stderr, "  {} R={} B={} ...\n", impl, R, B);
    try {
      rows.push_back(fn());
    } catch (const std::exception& e) {
      fmt::print(stderr, "  {} R={} B={} failed: {}\n", impl, R, B, e.what());
    }
  };
  const int64_t th = at::get_num_threads();
  run("copy", [&] { return time_copy(device, B, R, budget); });
  run("field_step_op", [&] { return time_field_step_op(device, B, R, budget); });
  run("field_step_seeded", [&] { return time_field_step_seeded(device, B, R, budget); });
  run("philox_fill", [&] { return time_philox_fill(device, B, R, budget); });
  run("field_step_reference", [&] { return time_field_step_reference(device, B, R, slow); });
  run("field_readout_op", [&] { return time_field_readout_op(device, B, R, budget); });
  run("python_eager", [&] { return time_python_field_step(device, "eager", B, R, th); });
  run("torch_compile", [&] { return time_python_field_step(device, "compile", B, R, th); });
  run("cpp_fast", [&] { return time_brain_cycle(device, "fast", B, R, budget); });
  run("cpp_reference", [&] { return time_brain_cycle(device, "reference", B, R, slow); });
  // The same cycles with a reward (app/bench/reward_schedule.h): the attractor bank's cost.
  run("cpp_fast_reward", [&] { return time_brain_cycle(device, "fast", B, R, budget, true); });
  run("cpp_reference_reward",
      [&] { return time_brain_cycle(device, "reference", B, R, slow, true); });
  run("group", [&] { return time_group_tick(device, false, B, R, budget); });
  run("group_churn", [&] { return time_group_churn(device, B, R, budget); });
  run("tick_singles", [&] { return time_group_tick(device, true, B, R, budget); });
  run("load", [&] { return time_brain_load(device, B, R, slow); });
  // The legacy profile and the original have no batch and serve R 16 and 32.
  if (B == 1 && R <= 32) {
    run("legacy", [&] { return time_legacy_cycle(R, slow); });
    run("python_original", [&] { return time_original_cycle(em_brain, R, quick ? 5 : 20); });
  }
  // B legacy robots through the server's engine: on one thread, and one robot per thread
  // (both asked: timed alternately, so both see the same load; legacy_thread_rows.h).
  const bool legacy_tick = want.count("legacy_tick") > 0;
  const bool legacy_threads = want.count("legacy_threads") > 0;
  if (R <= 32 && (legacy_tick || legacy_threads)) {
    fmt::print(stderr, "  legacy_tick/legacy_threads R={} B={} ...\n", R, B);
    try {
      for (auto& row : time_legacy_ticks(R, B, legacy_tick, legacy_threads, slow)) {
        rows.push_back(row);
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "  legacy_tick/legacy_threads R={} B={} failed: {}\n", R, B, e.what());
    }
  }
  run("python", [&] {
    return time_python_cycle(device, B, R, quick ? 2 : python_cycles(B, R),
                             at::get_num_threads());
  });
}

// The table, the batch gains and the reward costs; the JSON file when --json names one.
void report_rows(std::vector<BenchRow>& rows, const std::string& json_path) {
  add_ratios(rows);
  print_table(rows);
  print_batch_gains(rows);
  print_reward_costs(rows);
  print_legacy_thread_gains(rows);
  if (!json_path.empty()) {
    std::ofstream(json_path) << to_json(rows).dump(2) << "\n";
    fmt::print(stderr, "wrote {}\n", json_path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fieldbrain-bench: field step and brain cycle timings (table + JSON)"};
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain-bench"));
  BenchOptions o;
  add_bench_options(app, o);
  // 0 after --help/--version, 2 after a usage error, as every program (app/cli/command_line.h).
  if (const auto status = fieldbrain::cli::parse(app, argc, argv)) return *status;
  set_brain_dims(o.sensory_dim, o.motor_dim);
  torch::Device device = torch::kCPU;
  try {
    device = bench_device(o.device_name);
  } catch (const std::exception& e) {
    fmt::print(stderr, "fieldbrain-bench: {}\n", e.what());
    return 2;
  }
  if (!o.no_pool) fieldbrain::ops::CachingCpuAllocator::install();
  apply_defaults(app, o);
  // LibTorch may start with fewer threads than the machine has (1 here); use them all.
  int threads = o.threads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  const Budgets budgets = row_budgets(o);

  std::vector<BenchRow> rows;
  fmt::print(stderr, "fieldbrain-bench: device {}, {} intra-op threads, {}\n", device.str(),
             at::get_num_threads(), o.no_pool ? "default CPU allocator" : "caching CPU pool");
  for (int64_t R : o.Rs) {
    for (int64_t B : o.Bs) run_rows(device, R, B, o, budgets, rows);
  }
  report_rows(rows, o.json_path);
  return 0;
}
