#include "app/sim/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fieldbrain::sim {

nlohmann::json latency_summary(std::vector<float> ms) {
  if (ms.empty()) return nullptr;
  std::sort(ms.begin(), ms.end());
  const auto rank = [&](double q) {
    const size_t i = size_t(std::ceil(q * double(ms.size())));
    return double(ms[std::min(ms.size(), std::max<size_t>(i, 1)) - 1]);
  };
  const double sum = std::accumulate(ms.begin(), ms.end(), 0.0);
  return {{"samples", ms.size()},         {"mean", sum / double(ms.size())},
          {"p50", rank(0.50)},            {"p95", rank(0.95)},
          {"p99", rank(0.99)},            {"max", double(ms.back())}};
}

}  // namespace fieldbrain::sim
