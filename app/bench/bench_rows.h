// The measurements of fieldbrain-bench, one function per kind of row. Each times its work
// after one untimed warm-up (which also grows any cached scratch), reporting the median
// iteration, the CPU tensor allocations and the device->host copies per iteration. Every row
// runs on `device` (app/bench/device_timer.h: CUDA events on a GPU) and records it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <torch/torch.h>

#include "app/bench/bench_report.h"

namespace fieldbrain {
namespace bench {

struct RowBudget {
  double seconds = 2.0;        // keep iterating until this much time has passed...
  int64_t min_iterations = 3;  // ...and at least this many iterations ran
  int64_t max_iterations = 500;
};

// The sensor and motor counts of the cycle rows' brains (default: BrainConfig's S = 24, M = 4;
// --sensory-dim 12 --motor-dim 6 times the PiCar-X's). Set before any row runs.
void set_brain_dims(int64_t sensory_dim, int64_t motor_dim);

// fieldbrain::field_step_out (the fused operator) on realistic inputs.
BenchRow time_field_step_op(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget);
// fieldbrain::field_step_seeded_out (noise made in the kernel from a (seed, cycle) key).
BenchRow time_field_step_seeded(const torch::Device& device, int64_t B, int64_t R,
                                const RowBudget& budget);
// fieldbrain::philox_normal_out of one cycle's spontaneous-activity noise [B,48,R,R,R].
BenchRow time_philox_fill(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget);
// fieldbrain::field_step_reference (plain ATen ops) on the same inputs.
BenchRow time_field_step_reference(const torch::Device& device, int64_t B, int64_t R,
                                   const RowBudget& budget);
// fieldbrain::field_readout_out (the fused read-out of steps 5 and 8-10) on the same field.
BenchRow time_field_readout_op(const torch::Device& device, int64_t B, int64_t R,
                               const RowBudget& budget);
// A row's median and minimum from its per-cycle times (ms; reordered).
void set_cycle_times(BenchRow& row, std::vector<double>& ms);

// fn(i) timed on the CPU as every row is (once untimed, then per the budget): for rows whose
// work lives outside this file (app/bench/legacy_thread_rows.cpp).
BenchRow time_cpu_ticks(const std::string& impl, int64_t B, int64_t R, const RowBudget& budget,
                        const std::function<void(int64_t)>& fn);
// dst.copy_(src) of the batch's field (B x 64 x R^3 float32: 8 MiB per robot at R = 32).
BenchRow time_copy(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget);
// Whole FieldBrain cycles with config.field_step = field_step ("reference" -> impl
// "cpp_reference", "fast" -> "cpp_fast") on a smooth synthetic sensor stream. `rewarded`: the
// reward of app/bench/reward_schedule.h every cycle (rows "cpp_fast_reward",
// "cpp_reference_reward"), after one untimed reward period that fills the attractor bank.
BenchRow time_brain_cycle(const torch::Device& device, const std::string& field_step, int64_t B,
                          int64_t R, const RowBudget& budget, bool rewarded = false);
// The server's tick over B robots of one (S, M) with the fast field step, one tick per
// iteration, every robot ready: "group" steps B rows of one resident BrainGroup (the server
// today); "tick_singles" steps B single-robot FieldBrains through FieldBrainImpl::step_group
// (the server before BrainGroup: every robot's state copied into a scratch batch and back).
BenchRow time_group_tick(const torch::Device& device, bool singles, int64_t B, int64_t R,
                         const RowBudget& budget);
// The worst case of a resident group: 2B robots, ticks alternating between two halves of B,
// so every tick swaps B robots into the prefix (row "group_churn"; B robot-cycles per tick).
BenchRow time_group_churn(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget);
// FieldBrain::load of a brain saved after 30 cycles (some attractors live), on `device`; the
// note carries the file size and the save time (another process's handshake waits on a load).
BenchRow time_brain_load(const torch::Device& device, int64_t B, int64_t R, const RowBudget& budget);
// The Python reference's cycle on `device`: `python3 scripts/reference/fieldbrain_ref.py time
// --device ...` (a row the local torch cannot run, e.g. no CUDA, comes back `skipped`).
BenchRow time_python_cycle(const torch::Device& device, int64_t B, int64_t R, int64_t cycles,
                           int64_t threads);
// The legacy profile's cycle (one LegacyBrain, brain/legacy/LEGACY.md; S = 24, M = 4, a
// smooth stream, the fixed clock) at R, B = 1 (the original has no batch), on the CPU with one
// intra-op thread as the pinned original runs (row "legacy").
BenchRow time_legacy_cycle(int64_t R, const RowBudget& budget);
// The original em-brain's cycle (row "python_original") at R, S = 24, M = 4, on the user's
// checkout through scripts/legacy/run_original.py, pinned like compare-original: its --time
// report when the script has that mode, else the wall-time difference of a 2-cycle and a
// (2 + cycles)-cycle run (start-up and construction cancel). Skipped (with the reason) when
// em_brain is empty or the run fails.
BenchRow time_original_cycle(const std::string& em_brain, int64_t R, int64_t cycles);
// The reference's field_step on `device` through the Python torch of FIELDBRAIN_PYTHON:
// mode "eager" (row python_eager) or "compile" (row torch_compile, torch.compile). A row the
// local torch cannot produce (no torch.compile before 2.0, no CUDA) comes back with
// `skipped` set to the script's reason.
BenchRow time_python_field_step(const torch::Device& device, const std::string& mode, int64_t B,
                                int64_t R, int64_t threads);

}  // namespace bench
}  // namespace fieldbrain
