#include "app/bench/legacy_thread_rows.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "app/server/engine/legacy_brain_engine.h"
#include "brain/brain_config.h"

namespace fieldbrain {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kS = 24, kM = 4;
constexpr double kBlockSeconds = 0.2;  // one engine's turn when both rows are timed

// The engine pins ATen's intra-op threads to one for the process (P5); the rows after this one
// keep the count they were given.
struct RestoreIntraOpThreads {
  int threads = at::get_num_threads();
  ~RestoreIntraOpThreads() { at::set_num_threads(threads); }
};

const BenchRow* find_row(const std::vector<BenchRow>& rows, const std::string& impl, int64_t R,
                         int64_t B) {
  for (const auto& r : rows) {
    if (r.impl == impl && r.R == R && r.B == B && r.skipped.empty() && r.ms_per_cycle > 0) return &r;
  }
  return nullptr;
}

// CPU time of every thread of this process so far, and time they were runnable but waited for
// a CPU (the kernel's schedstat, ns): the second grows when other processes hold the cores.
struct CpuTimes {
  double run_ms = 0, wait_ms = 0;
};
CpuTimes process_cpu_times() {
  CpuTimes t;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(entry.path() / "schedstat");
    double run_ns = 0, wait_ns = 0;
    if (in >> run_ns >> wait_ns) {
      t.run_ms += run_ns * 1e-6;
      t.wait_ms += wait_ns * 1e-6;
    }
  }
  return t;
}

// One row's engine with its B robots, its input stream and what its timed ticks measured.
struct TimedEngine {
  TimedEngine(int64_t R, int64_t B, bool one_thread_per_robot)
      : B(B), parallel(one_thread_per_robot) {
    BrainConfig config;
    config.profile = BrainProfile::Legacy;
    config.resolution = R;
    config.sensory_dim = kS;
    config.motor_dim = kM;
    config.legacy_threads = one_thread_per_robot ? B : 1;
    engine = server::make_legacy_brain_engine(config);
    for (int64_t b = 0; b < B; ++b) {
      slots.push_back(engine->create(fmt::format("bench-{}", b), kS, kM));
    }
    sensors.resize(static_cast<size_t>(B * kS));
    rewards.assign(static_cast<size_t>(B), 0.0f);
  }
  void tick() {
    for (int64_t b = 0; b < B; ++b) {
      for (int i = 0; i < kS; ++i) {
        sensors[static_cast<size_t>(b * kS + i)] =
            0.6f * std::sin(0.157f * static_cast<float>(n) + 0.5f * i + 0.9f * b);
      }
    }
    engine->step_group_into(slots, sensors, rewards, motors);
    ++n;
  }
  // Ticks for `seconds` (at least one), each timed; the process's CPU times around them.
  void timed_block(double seconds, int64_t max_ticks) {
    const CpuTimes before = process_cpu_times();
    const auto start = Clock::now();
    do {
      const auto t0 = Clock::now();
      tick();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    } while (std::chrono::duration<double>(Clock::now() - start).count() < seconds &&
             static_cast<int64_t>(ms.size()) < max_ticks);
    elapsed_s += std::chrono::duration<double>(Clock::now() - start).count();
    const CpuTimes after = process_cpu_times();
    run_ms += after.run_ms - before.run_ms;
    wait_ms += after.wait_ms - before.wait_ms;
  }
  BenchRow row(int64_t R, bool alternated) {
    BenchRow r;
    r.impl = parallel ? "legacy_threads" : "legacy_tick";
    r.R = R;
    r.B = B;
    set_cycle_times(r, ms);
    // The allocation counters see the calling thread only, not the pool's helpers: left out.
    r.allocs_per_cycle = -1;
    r.tensor_buffers_per_cycle = -1;
    r.syncs_per_cycle = -1;
    r.threads = parallel ? B : 1;
    const double waited = run_ms + wait_ms > 0 ? 100.0 * wait_ms / (run_ms + wait_ms) : 0.0;
    r.note = fmt::format(
        "legacy engine, S24 M4, {} robots on {} thread{}; {}waited for a CPU {:.0f}%", B,
        r.threads, r.threads == 1 ? "" : "s",
        alternated ? "timed alternately with the other row; " : "", waited);
    return r;
  }

  int64_t B;
  bool parallel;
  std::unique_ptr<server::BrainEngine> engine;
  std::vector<server::BrainEngine::Slot> slots;
  std::vector<float> sensors, rewards, motors;
  int64_t n = 0;
  std::vector<double> ms;
  double elapsed_s = 0, run_ms = 0, wait_ms = 0;
};

}  // namespace

std::vector<BenchRow> time_legacy_ticks(int64_t R, int64_t B, bool tick, bool threads,
                                        const RowBudget& budget) {
  RestoreIntraOpThreads restore;
  std::vector<std::unique_ptr<TimedEngine>> engines;
  if (tick) engines.push_back(std::make_unique<TimedEngine>(R, B, false));
  if (threads) engines.push_back(std::make_unique<TimedEngine>(R, B, true));
  for (auto& e : engines) e->tick();  // untimed, as every row's first iteration
  const bool alternated = engines.size() > 1;
  const double block = alternated ? kBlockSeconds : budget.seconds;
  for (;;) {
    bool more = false;
    for (auto& e : engines) {
      const auto done = static_cast<int64_t>(e->ms.size());
      if (done >= budget.max_iterations) continue;
      if (e->elapsed_s >= budget.seconds && done >= budget.min_iterations) continue;
      more = true;
      e->timed_block(block, budget.max_iterations);
    }
    if (!more) break;
  }
  std::vector<BenchRow> rows;
  for (auto& e : engines) rows.push_back(e->row(R, alternated));
  return rows;
}

void print_legacy_thread_gains(const std::vector<BenchRow>& rows) {
  bool header = false;
  for (const auto& r : rows) {
    if (r.impl != "legacy_threads") continue;
    const BenchRow* parallel = find_row(rows, "legacy_threads", r.R, r.B);
    const BenchRow* serial = find_row(rows, "legacy_tick", r.R, r.B);
    if (parallel == nullptr || serial == nullptr) continue;
    if (!header) {
      fmt::print("\nlegacy robot-cycles/s, B robots on B threads vs on one thread (same run):\n");
      fmt::print("{:<16} {:>3} {:>3} {:>14} {:>14} {:>7}\n", "impl", "R", "B", "1 thread rc/s",
                 "B threads rc/s", "ratio");
      header = true;
    }
    const double one = 1000.0 * r.B / serial->ms_per_cycle;
    const double many = 1000.0 * r.B / parallel->ms_per_cycle;
    fmt::print("{:<16} {:>3} {:>3} {:>14.1f} {:>14.1f} {:>6.2f}x\n", r.impl, r.R, r.B, one, many,
               many / one);
  }
}

}  // namespace bench
}  // namespace fieldbrain
