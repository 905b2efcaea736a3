// The monitor's commands that read brain state, answered on the brain worker thread: a table
// of command name -> handler (monitor_commands.cpp), one function per command. The commands
// that need only the session or the server's counters (ping, subscribe, the rate limit of
// save, ...) are the session's own (monitor_session.cpp); the vocabulary both answer is
// monitor_commands() (monitor_envelope.h).
#pragma once

#include <cstddef>
#include <string>

#include "app/server/protocol/monitor_envelope.h"
#include "app/server/stats/server_stats.h"
#include "app/server/worker/brain_worker.h"

namespace fieldbrain::server {

// What a handler reads, on the worker thread.
struct MonitorQuery {
  BrainWorker& worker;
  ServerStats& stats;
  size_t monitor_clients;
  const MonitorCommand& cmd;
};

// The reply line (monitor_envelope.h); may throw std::exception (answered as an error).
using MonitorAnswer = std::string (*)(const MonitorQuery&);

// The handler of command `name`, or null when it is not a brain-state command.
MonitorAnswer brain_command(const std::string& name);

}  // namespace fieldbrain::server
