// A fixed-bucket histogram of reply latencies (a frame queued for the brain -> its motors
// ready), for /metrics (app/server/web/metrics_page.h). Lock-free: the brain worker records,
// any thread reads. Buckets are Prometheus "le" upper bounds in seconds, cumulative when read.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace fieldbrain::server {

class LatencyHistogram {
 public:
  // Upper bounds in seconds: 1 ms .. 1 s around the 50 ms loop of a PiCar-X client.
  static constexpr std::array<double, 11> kBounds = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                     0.1,   0.2,   0.5,   1.0,  2.5};

  void record(double seconds) {
    size_t i = 0;
    while (i < kBounds.size() && seconds > kBounds[i]) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);  // i == size(): only +Inf
    sum_us_.fetch_add(static_cast<uint64_t>(seconds * 1e6), std::memory_order_relaxed);
  }

  // Observations <= kBounds[i] (i < kBounds.size()), or all of them (i == kBounds.size()).
  uint64_t cumulative(size_t i) const {
    uint64_t n = 0;
    for (size_t k = 0; k <= i && k < counts_.size(); ++k) n += counts_[k].load();
    return n;
  }
  uint64_t count() const { return cumulative(kBounds.size()); }
  double sum_seconds() const { return static_cast<double>(sum_us_.load()) * 1e-6; }

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<uint64_t> sum_us_{0};
};

}  // namespace fieldbrain::server
