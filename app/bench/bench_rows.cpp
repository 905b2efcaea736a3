#include "app/bench/bench_rows.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/field_brain.h"
#include "brain/field_dynamics.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/caching_allocator.h"
#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"
#include "brain/sync_counter.h"

namespace fieldbrain {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

// Runs fn(i) once untimed, then times it per the budget.
template <typename Fn>
BenchRow measure(const std::string& impl, int64_t B, int64_t R, const RowBudget& budget, Fn fn) {
  fn(int64_t{0});
  std::vector<double> ms;
  int64_t allocs = 0, buffers = 0, syncs = 0;
  {
    const auto* pool = ops::CachingCpuAllocator::installed();
    const int64_t misses_before = pool ? pool->stats().system_allocations : 0;
    ops::AllocationCounter counter;
    SyncCounter::reset();
    const auto start = Clock::now();
    for (int64_t i = 1; i <= budget.max_iterations; ++i) {
      const auto t0 = Clock::now();
      fn(i);
      const auto t1 = Clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      const double elapsed = std::chrono::duration<double>(t1 - start).count();
      if (i >= budget.min_iterations && elapsed >= budget.seconds) break;
    }
    buffers = counter.count();
    allocs = pool ? pool->stats().system_allocations - misses_before : buffers;
    syncs = SyncCounter::count();
  }
  BenchRow row;
  row.impl = impl;
  row.R = R;
  row.B = B;
  row.iterations = static_cast<int64_t>(ms.size());
  row.ms_min = *std::min_element(ms.begin(), ms.end());
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  row.ms_per_cycle = ms[ms.size() / 2];
  row.allocs_per_cycle = static_cast<double>(allocs) / row.iterations;
  row.tensor_buffers_per_cycle = static_cast<double>(buffers) / row.iterations;
  row.syncs_per_cycle = static_cast<double>(syncs) / row.iterations;
  row.threads = at::get_num_threads();
  return row;
}

}  // namespace

BenchRow time_field_step_op(int64_t B, int64_t R, const RowBudget& budget) {
  const auto in = ops::make_field_step_inputs(B, R, 1);
  auto out = torch::empty_like(in.field);
  auto row = measure("field_step_op", B, R, budget, [&](int64_t) {
    ops::field_step_out(in.field, in.noise, in.wave, in.ef, in.scalars, out);
  });
  row.note = "isa " + ops::field_step_cpu_isa();
  return row;
}

BenchRow time_field_step_reference(int64_t B, int64_t R, const RowBudget& budget) {
  const auto in = ops::make_field_step_inputs(B, R, 1);
  return measure("field_step_reference", B, R, budget, [&](int64_t) {
    field_step_reference(in.field, in.noise, in.wave, in.ef, in.scalars);
  });
}

BenchRow time_copy(int64_t B, int64_t R, const RowBudget& budget) {
  const auto src = torch::randn({B, 64, R, R, R});
  auto dst = torch::empty_like(src);
  auto row = measure("copy", B, R, budget, [&](int64_t) { dst.copy_(src); });
  row.note = fmt::format("{:.1f} MiB", src.numel() * 4.0 / (1 << 20));
  return row;
}

BenchRow time_brain_cycle(const std::string& field_step, int64_t B, int64_t R,
                          const RowBudget& budget) {
  BrainConfig config;
  config.resolution = R;
  config.field_step = field_step;
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(b));
  FieldBrain brain(config, keys);
  brain->set_stage_timing(true);
  StageTotals stages;  // over the timed cycles
  const int64_t S = config.sensory_dim;
  // A smooth stream: each sensor a slow sinusoid with its own phase, no reward.
  const auto phase = torch::arange(B * S, torch::kFloat).reshape({B, S}) * 0.37;
  const auto reward = torch::zeros({B});
  std::vector<torch::Tensor> sensors;
  for (int64_t i = 0; i < 64; ++i) sensors.push_back(0.5 * torch::sin(phase + 0.1 * i));
  auto row = measure(field_step == "fast" ? "cpp_fast" : "cpp_reference", B, R, budget,
                     [&](int64_t i) {
                       brain->step(sensors[i % 64], reward);
                       if (i > 0) stages.add(brain->stage_times());  // not the untimed warm-up
                     });
  row.stage_ms = stages.means(row.iterations);
  row.note = "field_step " + field_step;
  return row;
}

BenchRow time_python_cycle(int64_t B, int64_t R, int64_t cycles, int64_t threads) {
  const std::string cmd = fmt::format(
      "{} {}/scripts/reference/fieldbrain_ref.py time --R {} --B {} --cycles {} --warmup 1 "
      "--threads {}",
      FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, R, B, cycles, threads);
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
  const auto j = nlohmann::json::parse(last_line);
  BenchRow row;
  row.impl = "python";
  row.R = R;
  row.B = B;
  row.ms_per_cycle = j.at("ms_per_cycle").get<double>();
  row.ms_min = row.ms_per_cycle;  // the script reports the mean only
  row.iterations = cycles;
  row.allocs_per_cycle = -1;
  row.tensor_buffers_per_cycle = -1;
  row.syncs_per_cycle = -1;
  row.threads = threads;
  row.note = "mean";
  return row;
}

}  // namespace bench
}  // namespace fieldbrain
