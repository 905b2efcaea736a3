// The measurements of fieldbrain-bench, one function per kind of row. Each times its work
// after one untimed warm-up (which also grows any cached scratch), reporting the median
// iteration, the CPU tensor allocations and the device->host copies per iteration.
#pragma once

#include <cstdint>
#include <string>

#include "app/bench/bench_report.h"

namespace fieldbrain {
namespace bench {

struct RowBudget {
  double seconds = 2.0;        // keep iterating until this much time has passed...
  int64_t min_iterations = 3;  // ...and at least this many iterations ran
  int64_t max_iterations = 500;
};

// fieldbrain::field_step_out (the fused operator) on realistic inputs.
BenchRow time_field_step_op(int64_t B, int64_t R, const RowBudget& budget);
// fieldbrain::field_step_reference (plain ATen ops) on the same inputs.
BenchRow time_field_step_reference(int64_t B, int64_t R, const RowBudget& budget);
// dst.copy_(src) of the batch's field (B x 64 x R^3 float32: 8 MiB per robot at R = 32).
BenchRow time_copy(int64_t B, int64_t R, const RowBudget& budget);
// Whole FieldBrain cycles with config.field_step = field_step ("reference" -> impl
// "cpp_reference", "fast" -> "cpp_fast") on a smooth synthetic sensor stream.
BenchRow time_brain_cycle(const std::string& field_step, int64_t B, int64_t R,
                          const RowBudget& budget);
// The Python reference's cycle: `python3 scripts/reference/fieldbrain_ref.py time ...`.
BenchRow time_python_cycle(int64_t B, int64_t R, int64_t cycles, int64_t threads);

}  // namespace bench
}  // namespace fieldbrain
