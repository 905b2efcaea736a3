#include "hrr/call_timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace fieldbrain::hrr {

double median_call_ms(const std::function<void()>& call, const TimingBudget& budget) {
  using clock = std::chrono::steady_clock;
  std::vector<double> ms;
  double total = 0.0;
  for (int i = 0; i < budget.warmup_calls; ++i) {
    const auto start = clock::now();
    call();
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    // A call that alone takes several budgets is not noticeably faster when warm: keep it
    // as the measurement instead of paying for it again.
    if (seconds > 4.0 * budget.min_total_seconds) return seconds * 1e3;
  }
  while (static_cast<int>(ms.size()) < budget.max_calls &&
         (static_cast<int>(ms.size()) < budget.min_calls || total < budget.min_total_seconds)) {
    const auto start = clock::now();
    call();
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    ms.push_back(seconds * 1e3);
    total += seconds;
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace fieldbrain::hrr
