#include "app/bench/bench_rows.h"

#include "app/bench/device_timer.h"
#include "app/bench/reward_schedule.h"

#include <unistd.h>  // getpid

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/brain_group.h"
#include "brain/field_brain.h"
#include "brain/field_dynamics.h"
#include "brain/legacy/legacy_profile.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/caching_allocator.h"
#include "brain/ops/field_readout.h"
#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"
#include "brain/sync_counter.h"

namespace fieldbrain {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

void set_cycle_times(BenchRow& row, std::vector<double>& ms) {
  row.iterations = static_cast<int64_t>(ms.size());
  row.ms_min = *std::min_element(ms.begin(), ms.end());
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  row.ms_per_cycle = ms[ms.size() / 2];
}

namespace {

// Runs fn(i) once untimed, then times it per the budget.
template <typename Fn>
BenchRow measure(const std::string& impl, const torch::Device& device, int64_t B, int64_t R,
                 const RowBudget& budget, Fn fn) {
  fn(int64_t{0});
  DeviceTimer timer(device);
  std::vector<double> ms;
  int64_t allocs = 0, buffers = 0, syncs = 0;
  {
    const auto* pool = ops::CachingCpuAllocator::installed();
    const int64_t misses_before = pool ? pool->stats().system_allocations : 0;
    ops::AllocationCounter counter;
    SyncCounter::reset();
    const auto start = Clock::now();
    for (int64_t i = 1; i <= budget.max_iterations; ++i) {
      timer.start();
      fn(i);
      ms.push_back(timer.stop_ms());
      const auto t1 = Clock::now();
      const double elapsed = std::chrono::duration<double>(t1 - start).count();
      if (i >= budget.min_iterations && elapsed >= budget.seconds) break;
    }
    buffers = counter.count();
    allocs = pool ? pool->stats().system_allocations - misses_before : buffers;
    syncs = SyncCounter::count();
  }
  BenchRow row;
  row.impl = impl;
  row.device = device.is_cuda() ? "cuda" : "cpu";
  row.R = R;
  row.B = B;
  set_cycle_times(row, ms);
  row.allocs_per_cycle = static_cast<double>(allocs) / row.iterations;
  row.tensor_buffers_per_cycle = static_cast<double>(buffers) / row.iterations;
  row.syncs_per_cycle = static_cast<double>(syncs) / row.iterations;
  row.threads = at::get_num_threads();
  return row;
}

}  // namespace

namespace {

ops::FieldStepInputs inputs_on(const torch::Device& device, int64_t B, int64_t R) {
  const auto in = ops::make_field_step_inputs(B, R, 1);
  return {in.field.to(device), in.noise.to(device), in.wave.to(device), in.ef.to(device),
          in.scalars.to(device)};
}

}  // namespace

BenchRow time_field_step_op(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget) {
  const auto in = inputs_on(device, B, R);
  auto out = torch::empty_like(in.field);
  auto row = measure("field_step_op", device, B, R, budget, [&](int64_t) {
    ops::field_step_out(in.field, in.noise, in.wave, in.ef, in.scalars, out);
  });
  row.note = device.is_cuda() ? "CUDA kernel" : "isa " + ops::field_step_cpu_isa();
  return row;
}

BenchRow time_field_readout_op(const torch::Device& device, int64_t B, int64_t R,
                               const RowBudget& budget) {
  const auto in = inputs_on(device, B, R);
  auto out = torch::empty({B, ops::kReadoutWidth}, in.field.options());
  auto row = measure("field_readout_op", device, B, R, budget,
                     [&](int64_t) { ops::field_readout_out(in.field, out); });
  row.note = device.is_cuda() ? "CUDA kernel" : "isa " + ops::field_readout_cpu_isa();
  return row;
}

// The seeded variant makes its noise inside the kernel from (seed, cycle): the cycle moves on
// every iteration so no two steps see the same noise.
BenchRow time_field_step_seeded(const torch::Device& device, int64_t B, int64_t R,
                                const RowBudget& budget) {
  const auto in = inputs_on(device, B, R);
  auto out = torch::empty_like(in.field);
  auto key = torch::zeros({B, 2}, torch::kLong);
  for (int64_t b = 0; b < B; ++b) key[b][0] = static_cast<int64_t>(robot_seed(42, b));
  key = key.to(device);
  auto next_cycle = torch::zeros({B, 2}, torch::kLong);
  next_cycle.select(1, 1).fill_(1);
  next_cycle = next_cycle.to(device);
  auto row = measure("field_step_seeded", device, B, R, budget, [&](int64_t) {
    ops::field_step_seeded_out(in.field, key, in.wave, in.ef, in.scalars, out);
    key.add_(next_cycle);  // as the brain does: no scalar tensor per call
  });
  row.note = device.is_cuda() ? "CUDA kernel, noise in-kernel" : "isa " + ops::field_step_cpu_isa() + ", noise in-kernel";
  return row;
}

// philox_normal_out of one cycle's eps_sp [B,48,R,R,R]: what making the noise costs alone.
BenchRow time_philox_fill(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget) {
  auto out = torch::empty({B, 48, R, R, R}, torch::TensorOptions().device(device));
  auto key = torch::zeros({B, 2}, torch::kLong).to(device);
  auto row = measure("philox_fill", device, B, R, budget, [&](int64_t) {
    ops::philox_normal_out(key, 2, out);
  });
  row.note = fmt::format("{:.2f} M normals", out.numel() / 1e6);
  return row;
}

BenchRow time_field_step_reference(const torch::Device& device, int64_t B, int64_t R,
                                   const RowBudget& budget) {
  const auto in = inputs_on(device, B, R);
  return measure("field_step_reference", device, B, R, budget, [&](int64_t) {
    field_step_reference(in.field, in.noise, in.wave, in.ef, in.scalars);
  });
}

BenchRow time_cpu_ticks(const std::string& impl, int64_t B, int64_t R, const RowBudget& budget,
                        const std::function<void(int64_t)>& fn) {
  return measure(impl, torch::Device(torch::kCPU), B, R, budget, fn);
}

BenchRow time_copy(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget) {
  const auto src = torch::randn({B, 64, R, R, R}).to(device);
  auto dst = torch::empty_like(src);
  auto row = measure("copy", device, B, R, budget, [&](int64_t) { dst.copy_(src); });
  row.note = fmt::format("{:.1f} MiB", src.numel() * 4.0 / (1 << 20));
  return row;
}

namespace {

int64_t g_sensory_dim = BrainConfig{}.sensory_dim;
int64_t g_motor_dim = BrainConfig{}.motor_dim;

// The config of the cycle rows: defaults (S and M: set_brain_dims) at resolution R on `device`.
BrainConfig bench_config(const torch::Device& device, int64_t R, const std::string& field_step) {
  BrainConfig config;
  config.sensory_dim = g_sensory_dim;
  config.motor_dim = g_motor_dim;
  config.resolution = R;
  config.device = device.is_cuda() ? "cuda" : "cpu";
  config.field_step = field_step;
  return config;
}

// A smooth stream of 64 frames [B,S]: each sensor a slow sinusoid with its own phase. Made
// before timing, so the timed loop creates no input tensor.
std::vector<torch::Tensor> smooth_stream(int64_t B, int64_t S) {
  const auto phase = torch::arange(B * S, torch::kFloat).reshape({B, S}) * 0.37;
  std::vector<torch::Tensor> frames;
  for (int64_t i = 0; i < 64; ++i) frames.push_back(0.5 * torch::sin(phase + 0.1 * i));
  return frames;
}

}  // namespace

void set_brain_dims(int64_t sensory_dim, int64_t motor_dim) {
  g_sensory_dim = sensory_dim;
  g_motor_dim = motor_dim;
}

namespace {

// The reward of each cycle of a reward period, [B] frames made before timing (zeros when the
// row is not rewarded).
std::vector<torch::Tensor> reward_stream(int64_t B, bool rewarded) {
  std::vector<torch::Tensor> frames;
  for (int64_t i = 0; i < kRewardPeriod; ++i) {
    auto r = torch::zeros({B});
    for (int64_t b = 0; b < B && rewarded; ++b) r[b] = scheduled_reward(i, b);
    frames.push_back(r);
  }
  return frames;
}

// Tensor buffers requested so far (the stage table's per-stage tensors); the pool counts them.
int64_t pool_requests() {
  const auto* pool = ops::CachingCpuAllocator::installed();
  return pool != nullptr ? pool->stats().requests : 0;
}

}  // namespace

BenchRow time_brain_cycle(const torch::Device& device, const std::string& field_step, int64_t B,
                          int64_t R, const RowBudget& budget, bool rewarded) {
  const BrainConfig config = bench_config(device, R, field_step);
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(b));
  FieldBrain brain(config, keys);
  brain->set_stage_timing(true);
  if (ops::CachingCpuAllocator::installed() != nullptr) brain->count_stage_tensors(pool_requests);
  StageTotals stages;  // over the timed cycles
  const auto sensors = smooth_stream(B, config.sensory_dim);
  const auto rewards = reward_stream(B, rewarded);
  auto motors = torch::empty({B, config.motor_dim});  // reused: the cycle's output buffer
  // A rewarded row first runs one reward period untimed, so every slot of the bank is in use
  // (the steady state of a learning robot) before the timing starts.
  if (rewarded) {
    for (int64_t i = 0; i < kRewardPeriod; ++i) brain->step_into(sensors[i % 64], rewards[i], motors);
  }
  const std::string impl = std::string(config.cycle() == BrainCycle::Fused ? "cpp_fast" : "cpp_reference") +
                           (rewarded ? "_reward" : "");
  auto row = measure(impl, device, B, R, budget, [&](int64_t i) {
    brain->step_into(sensors[i % 64], rewards[i % kRewardPeriod], motors);
    if (i > 0) stages.add(brain->stage_times());  // not the untimed warm-up
  });
  row.stage_ms = stages.means(row.iterations);
  if (ops::CachingCpuAllocator::installed() != nullptr) row.stage_tensors = stages.counted_means(row.iterations);
  row.note =
      fmt::format("field_step {}, S={} M={}", field_step, config.sensory_dim, config.motor_dim);
  if (rewarded) {
    int64_t live = 0;
    for (int64_t b = 0; b < B; ++b) live += brain->telemetry(b).value("attractors", int64_t{0});
    row.note += fmt::format(", reward schedule (app/bench/reward_schedule.h), {:.1f} live slots/robot",
                            static_cast<double>(live) / B);
  }
  return row;
}

BenchRow time_group_tick(const torch::Device& device, bool singles, int64_t B, int64_t R,
                         const RowBudget& budget) {
  const BrainConfig config = bench_config(device, R, "fast");
  const auto sensors = smooth_stream(B, config.sensory_dim);
  const auto reward = torch::zeros({B});
  BenchRow row;
  if (singles) {
    std::vector<FieldBrain> brains;
    std::vector<FieldBrainImpl*> group;
    for (int64_t b = 0; b < B; ++b) {
      brains.emplace_back(config, std::vector<uint64_t>{static_cast<uint64_t>(b)});
      group.push_back(brains.back().get());
    }
    row = measure("tick_singles", device, B, R, budget, [&](int64_t i) {
      if (B == 1) group[0]->step(sensors[i % 64], reward);  // as the server did for one robot
      else FieldBrainImpl::step_group(group, sensors[i % 64], reward);
    });
    row.note = "fast; B single brains via FieldBrainImpl::step_group";
  } else {
    BrainGroup group(config, B);
    std::vector<BrainGroupImpl::Row> rows;
    for (int64_t b = 0; b < B; ++b) rows.push_back(group->claim(static_cast<uint64_t>(b)));
    const int64_t copies = group->row_copies();
    row = measure("group", device, B, R, budget,
                  [&](int64_t i) { group->step(rows, sensors[i % 64], reward); });
    row.note = fmt::format("fast; B rows of one BrainGroup, {} row copies while ticking",
                           group->row_copies() - copies);
  }
  return row;
}

BenchRow time_group_churn(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget) {
  const BrainConfig config = bench_config(device, R, "fast");
  const auto sensors = smooth_stream(B, config.sensory_dim);
  const auto reward = torch::zeros({B});
  BrainGroup group(config, 2 * B);
  std::vector<BrainGroupImpl::Row> halves[2];
  for (int64_t b = 0; b < 2 * B; ++b) halves[b % 2].push_back(group->claim(static_cast<uint64_t>(b)));
  const int64_t copies = group->row_copies();
  auto row = measure("group_churn", device, B, R, budget, [&](int64_t i) {
    group->step(halves[i % 2], sensors[(i / 2) % 64], reward);
  });
  row.note = fmt::format("fast; 2B rows, halves alternate: {:.1f} row copies per tick",
                         static_cast<double>(group->row_copies() - copies) / (row.iterations + 1));
  return row;
}

BenchRow time_brain_load(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget) {
  const BrainConfig config = bench_config(device, R, "fast");
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(b));
  FieldBrain brain(config, keys);
  const auto sensors = smooth_stream(B, config.sensory_dim);
  for (int64_t i = 0; i < 30; ++i) {
    brain->step(sensors[i], torch::full({B}, i % 7 == 3 ? 0.6f : 0.0f));
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("fieldbrain-bench-{}-load.pt", ::getpid()))
                               .string();
  const auto t0 = Clock::now();
  brain->save(path);
  const double save_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  FieldBrain loaded(config, keys);
  auto row = measure("load", device, B, R, budget, [&](int64_t) { loaded->load(path); });
  row.note = fmt::format("{:.2f} MB file, save {:.1f} ms, {} live attractors",
                         std::filesystem::file_size(path) / 1e6, save_ms,
                         brain->telemetry(0).at("attractors").get<int64_t>());
  std::filesystem::remove(path);
  return row;
}

namespace {

// Runs `cmd` and parses its last line that starts with '{'.
nlohmann::json run_json_command(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run: " + cmd);
  std::string output, last_line;
  char buf[1024];
  while (fgets(buf, sizeof buf, pipe) != nullptr) {
    output += buf;
    if (buf[0] == '{') last_line = buf;
  }
  const int status = pclose(pipe);
  if (status != 0 || last_line.empty()) {
    throw std::runtime_error("the Python reference failed (" + cmd + "):\n" + output);
  }
  return nlohmann::json::parse(last_line);
}

}  // namespace

BenchRow time_python_cycle(const torch::Device& device, int64_t B, int64_t R, int64_t cycles,
                           int64_t threads) {
  const std::string device_name = device.is_cuda() ? "cuda" : "cpu";
  const auto j = run_json_command(fmt::format(
      "{} {}/scripts/reference/fieldbrain_ref.py time --device {} --R {} --B {} --cycles {} "
      "--warmup 1 --threads {}",
      FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, device_name, R, B, cycles, threads));
  BenchRow row;
  row.impl = "python";
  row.device = device_name;
  row.R = R;
  row.B = B;
  row.allocs_per_cycle = -1;
  row.tensor_buffers_per_cycle = -1;
  row.syncs_per_cycle = -1;
  row.threads = threads;
  if (j.contains("skipped")) {
    row.skipped = j.at("skipped").get<std::string>();
    return row;
  }
  row.ms_per_cycle = j.at("ms_per_cycle").get<double>();
  row.ms_min = row.ms_per_cycle;  // the script reports the mean only
  row.iterations = cycles;
  row.note = "mean";
  return row;
}

BenchRow time_legacy_cycle(int64_t R, const RowBudget& budget) {
  torch::NoGradGuard no_grad;
  const int threads = at::get_num_threads();
  at::set_num_threads(1);  // P5: the original is timed pinned to one thread
  BrainConfig config;      // S = 24, M = 4, seed 42: the defaults
  config.profile = BrainProfile::Legacy;
  config.resolution = R;
  legacy::LegacyBrain brain(legacy_options(config, config.seed));
  const auto frames = smooth_stream(1, config.sensory_dim);
  std::vector<std::vector<double>> lists;
  for (const auto& f : frames) {
    const auto row = f[0].to(torch::kFloat64).contiguous();
    lists.emplace_back(row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
  }
  BenchRow row;
  try {
    row = measure("legacy", torch::Device(torch::kCPU), 1, R, budget, [&](int64_t i) {
      brain->step(lists[static_cast<size_t>(i % 64)],
                  legacy_clock_seconds(LegacyClock::Fixed, brain->cycle()));
    });
  } catch (...) {
    at::set_num_threads(threads);
    throw;
  }
  at::set_num_threads(threads);
  row.threads = 1;
  row.syncs_per_cycle = -1;
  row.note = "legacy profile, S24 M4, 1 thread";
  return row;
}

BenchRow time_original_cycle(const std::string& em_brain, int64_t R, int64_t cycles) {
  BenchRow row;
  row.impl = "python_original";
  row.R = R;
  row.B = 1;
  row.threads = 1;
  row.allocs_per_cycle = -1;
  row.tensor_buffers_per_cycle = -1;
  row.syncs_per_cycle = -1;
  if (em_brain.empty()) {
    row.skipped = "needs --em-brain PATH (an em-brain checkout at ef2bdb8)";
    return row;
  }
  const std::string script =
      fmt::format("{} {}/scripts/legacy/run_original.py", FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR);
  const auto out = std::filesystem::temp_directory_path() /
                   fmt::format("fieldbrain-bench-original-{}-{}", getpid(), R);
  // One pinned run of n cycles (smooth input, seed 42, as compare-original runs it): its wall
  // time, or its --time report when the script has one.
  const auto run = [&](int64_t n, const char* extra) {
    const std::string cmd = fmt::format(
        "{} --em-brain '{}' --out '{}' --stream smooth --rewards off --R {} --S 24 --M 4 "
        "--cycles {} --seed 42{} 2>&1",
        script, em_brain, out.string(), R, n, extra);
    const auto t0 = std::chrono::steady_clock::now();
    nlohmann::json j;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("cannot run: " + cmd);
    std::string output, last_json;
    char buf[1024];
    while (fgets(buf, sizeof buf, pipe) != nullptr) {
      output += buf;
      if (buf[0] == '{') last_json = buf;
    }
    if (pclose(pipe) != 0) {
      throw std::runtime_error("the original failed (" + cmd + "):\n" + output);
    }
    j["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!last_json.empty()) j["report"] = nlohmann::json::parse(last_json);
    return j;
  };
  try {
    FILE* help = popen((script + " --help 2>&1").c_str(), "r");
    std::string usage;
    char buf[1024];
    while (help != nullptr && fgets(buf, sizeof buf, help) != nullptr) usage += buf;
    if (help != nullptr) pclose(help);
    if (usage.find("--time") != std::string::npos) {
      const auto j = run(cycles, " --time").at("report");
      row.ms_per_cycle = j.at("ms_per_cycle").get<double>();
      row.ms_min = j.value("ms_min", row.ms_per_cycle);
      row.note = "em-brain, pinned, 1 thread; run_original.py --time";
    } else {
      // No timing mode: the difference of two runs' wall times cancels start-up and
      // construction (the hardware benchmark P6 runs in both).
      const int64_t few = 2;
      const double t_few = run(few, "").at("wall_s").get<double>();
      const double t_many = run(few + cycles, "").at("wall_s").get<double>();
      row.ms_per_cycle = 1000.0 * std::max(0.0, t_many - t_few) / static_cast<double>(cycles);
      row.ms_min = row.ms_per_cycle;
      row.note =
          fmt::format("em-brain, pinned, 1 thread; wall({}) - wall({}) cycles", few + cycles, few);
    }
    row.iterations = cycles;
  } catch (const std::exception& e) {
    row.skipped = "run_original.py failed (see stderr)";
    fmt::print(stderr, "{}\n", e.what());
  }
  std::error_code ignored;
  std::filesystem::remove_all(out, ignored);
  return row;
}

BenchRow time_python_field_step(const torch::Device& device, const std::string& mode, int64_t B,
                                int64_t R, int64_t threads) {
  const std::string device_name = device.is_cuda() ? "cuda" : "cpu";
  const auto j = run_json_command(fmt::format(
      "{} {}/scripts/reference/fieldbrain_ref.py time-step --device {} --mode {} --R {} --B {} "
      "--threads {} 2>&1",
      FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, device_name, mode, R, B, threads));
  BenchRow row;
  row.impl = mode == "compile" ? "torch_compile" : "python_eager";
  row.device = device_name;
  row.R = R;
  row.B = B;
  row.threads = threads;
  row.allocs_per_cycle = -1;
  row.tensor_buffers_per_cycle = -1;
  row.syncs_per_cycle = -1;
  row.note = "field_step, torch " + j.value("torch", std::string("?"));
  if (j.contains("skipped")) {
    row.skipped = j.at("skipped").get<std::string>();
    return row;
  }
  row.ms_per_cycle = j.at("ms_per_step").get<double>();
  row.ms_min = row.ms_per_cycle;  // the script reports the mean only
  row.iterations = j.at("steps").get<int64_t>();
  row.note += ", mean";
  return row;
}

}  // namespace bench
}  // namespace fieldbrain
