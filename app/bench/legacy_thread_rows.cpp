#include "app/bench/legacy_thread_rows.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "app/server/engine/legacy_brain_engine.h"
#include "brain/brain_config.h"

namespace fieldbrain {
namespace bench {
namespace {

constexpr int kS = 24, kM = 4;

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

}  // namespace

BenchRow time_legacy_tick(int64_t R, int64_t B, bool one_thread_per_robot,
                          const RowBudget& budget) {
  RestoreIntraOpThreads restore;
  BrainConfig config;
  config.profile = BrainProfile::Legacy;
  config.resolution = R;
  config.sensory_dim = kS;
  config.motor_dim = kM;
  config.legacy_threads = one_thread_per_robot ? B : 1;
  auto engine = server::make_legacy_brain_engine(config);
  std::vector<server::BrainEngine::Slot> slots;
  for (int64_t b = 0; b < B; ++b) slots.push_back(engine->create(fmt::format("bench-{}", b), kS, kM));
  std::vector<float> sensors(static_cast<size_t>(B * kS)), rewards(static_cast<size_t>(B), 0.0f),
      motors;
  const auto tick = [&](int64_t n) {
    for (int64_t b = 0; b < B; ++b) {
      for (int i = 0; i < kS; ++i) {
        sensors[static_cast<size_t>(b * kS + i)] =
            0.6f * std::sin(0.157f * static_cast<float>(n) + 0.5f * i + 0.9f * b);
      }
    }
    engine->step_group_into(slots, sensors, rewards, motors);
  };
  // The counters of measure() see the calling thread only, not the pool's helpers: left out.
  BenchRow row = time_cpu_ticks(one_thread_per_robot ? "legacy_threads" : "legacy_tick", B, R,
                                budget, tick);
  row.allocs_per_cycle = -1;
  row.tensor_buffers_per_cycle = -1;
  row.syncs_per_cycle = -1;
  row.threads = one_thread_per_robot ? B : 1;
  row.note = fmt::format("legacy engine, S24 M4, {} robots on {} thread{}", B, row.threads,
                         row.threads == 1 ? "" : "s");
  return row;
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
