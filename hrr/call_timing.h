// Wall-clock timing of a call: warm-up, then repeated calls until a time budget is spent,
// reporting the median per call (robust to the other jobs sharing this machine). A warm-up
// call longer than 4 budgets is itself the measurement. The one timing loop of the HRR side:
// fieldbrain-hrr's benchmark and the device policy's CPU/CUDA comparison (device_policy.cpp)
// both use it, and scripts/hrr/bench.py times the Python side the same way. fieldbrain-bench
// keeps its own loop (app/bench/bench_rows.cpp) because it times with CUDA events and counts
// allocations per iteration, which this host-clock median cannot.
#pragma once

#include <functional>

namespace fieldbrain::hrr {

struct TimingBudget {
  int warmup_calls = 1;
  int min_calls = 3;
  int max_calls = 1000;
  double min_total_seconds = 0.5;
};

double median_call_ms(const std::function<void()>& call, const TimingBudget& budget);

}  // namespace fieldbrain::hrr
