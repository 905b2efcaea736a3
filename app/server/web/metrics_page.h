// The operator pages of the web port, for scrapers and supervisors rather than browsers:
//   /metrics  Prometheus text format (version 0.0.4): robots, cycles (total and per robot per
//             second), the reply latency histogram, bad frames, errors by code, saves, dropped
//             monitor lines, each robot's over-budget flag, rewards the brain dropped; every
//             name starts with fieldbrain_ (docs/server.md lists them), but the standard
//             process_* families (CPU seconds, memory, descriptors: process_metrics.h);
//   /healthz  "ok" once the brain worker answers a query (a stuck worker never answers, so a
//             health check with a timeout sees it), 503 while the server stops.
// Both read what only the brain worker thread may read through one worker query, like the web
// monitor's snapshot, and answer on the web I/O thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace fieldbrain::server::web {

class WebHub;

struct OperatorPage {
  int status = 200;
  std::string content_type;
  std::string body;
};

// Whether `target` (query string ignored) is /metrics or /healthz.
bool is_operator_page(std::string_view target);

// Builds the page for `target` and calls `done` with it on the web I/O thread. `done` is
// called at most once; never when the server stops before the worker answered (the
// connection then closes).
void render_operator_page(std::string_view target, WebHub& hub,
                          std::function<void(OperatorPage)> done);

}  // namespace fieldbrain::server::web
