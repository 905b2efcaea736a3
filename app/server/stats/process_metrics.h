// The process_* families every Prometheus client library exports, under their standard names,
// so the usual dashboards and alerts work on this server unchanged:
//   process_cpu_seconds_total       user + system CPU time (counter)
//   process_resident_memory_bytes   resident set size
//   process_virtual_memory_bytes    virtual memory size
//   process_open_fds                open file descriptors
//   process_max_fds                 the descriptor limit (RLIMIT_NOFILE, soft)
//   process_start_time_seconds      start time, seconds since the epoch
// Read from /proc/self on Linux; a value that cannot be read is left out rather than reported
// as 0.
#pragma once

#include <string>

namespace fieldbrain::server {

// Appends the families above in the text format (version 0.0.4) to `out`.
void append_process_metrics(std::string& out);

}  // namespace fieldbrain::server
