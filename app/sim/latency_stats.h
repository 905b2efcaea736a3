// Reply latencies summarised for summary.json: count, mean, median, 95th and 99th
// percentile (nearest rank) and maximum, in milliseconds.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace fieldbrain::sim {

// {"samples","mean","p50","p95","p99","max"}; null when there are no samples.
nlohmann::json latency_summary(std::vector<float> latencies_ms);

}  // namespace fieldbrain::sim
