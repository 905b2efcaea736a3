// One benchmark measurement (a row), the derived ratios, the printed table and the JSON file
// {"rows": [...]} that scripts/plot_bench.py reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fieldbrain {
namespace bench {

struct BenchRow {
  std::string impl;  // "field_step_op" | "field_step_reference" | "copy" | "cpp_reference" |
                     // "cpp_fast" | "python" (cycle) | "python_eager" | "torch_compile" (field step)
                     // | "legacy" | "python_original" (the legacy profile and em-brain's cycle)
  std::string device = "cpu";  // where the row ran: "cpu" | "cuda"
  std::string skipped;         // non-empty: the row could not run here, and why (not timed)
  int64_t R = 0;
  int64_t B = 0;
  double ms_per_cycle = 0.0;  // median over the timed iterations
  double ms_min = 0.0;
  int64_t iterations = 0;
  // Allocations that reached the system allocator (malloc), per cycle: with the caching pool
  // (brain/ops/caching_allocator.h) these are its misses; without it, every tensor buffer.
  double allocs_per_cycle = 0.0;  // -1: not measured
  double tensor_buffers_per_cycle = 0.0;  // tensor buffers the ATen ops asked for (-1: n/a)
  double syncs_per_cycle = 0.0;   // device->host copies (-1: not measured)
  int64_t threads = 0;
  std::string note;  // e.g. the instruction set of the fused op
  std::vector<std::pair<std::string, double>> stage_ms;  // cycle rows: mean host ms per stage
  std::vector<std::pair<std::string, double>> stage_tensors;  // and tensor buffers per stage
  // Filled by add_ratios(): the same (R, B)'s python / cpp_reference / copy rows over this.
  double speedup_vs_python = 0.0;
  double speedup_vs_reference = 0.0;
  double fraction_of_roofline = 0.0;
};

// Field-step rows are compared with field_step_reference and python_eager, cycle rows with
// cpp_reference and python, the legacy row with python_original (the original em-brain) only;
// every row with the copy of the same (R, B) (copy_ms / ms: 1 = memory bound). Skipped rows get
// no ratios and serve as no baseline.
void add_ratios(std::vector<BenchRow>& rows);
void print_table(const std::vector<BenchRow>& rows);  // and the per-stage table of cycle rows
// Per cycle-like impl and R: robot-cycles/s at each B beside B = 1's, and their ratio (what
// batching buys; the target for the server's tick is >= 1.8x at B = 4).
void print_batch_gains(const std::vector<BenchRow>& rows);
// Per rewarded row (impl ending in "_reward"): its ms beside the plain row of the same impl, R
// and B, and their ratio (issue 42's target: <= 1.5x for cpp_fast at R = 32, B = 1).
void print_reward_costs(const std::vector<BenchRow>& rows);
nlohmann::json to_json(const std::vector<BenchRow>& rows);

}  // namespace bench
}  // namespace fieldbrain
