// Wall-clock timing of one benchmark case: warm-up, then repeated calls until a time budget is
// spent, reporting the median per call (robust to the other jobs sharing this machine). A
// warm-up call longer than 4 budgets is itself the measurement. scripts/hrr/bench.py times
// the Python side the same way.
#pragma once

#include <functional>

namespace fieldbrain::hrr::cli {

struct TimingBudget {
  int warmup_calls = 1;
  int min_calls = 3;
  int max_calls = 1000;
  double min_total_seconds = 0.5;
};

double median_call_ms(const std::function<void()>& call, const TimingBudget& budget);

}  // namespace fieldbrain::hrr::cli
