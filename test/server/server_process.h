// fieldbrain-server as a child process for the tests that need signals and exit codes.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "test/support/child_process.h"

namespace fieldbrain::server::testing {

// The shared child-process helper (test/support/child_process.h).
using fieldbrain::test::ChildProcess;

// A shell command's exit status and its stdout and stderr together; `timeout` bounds it.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};

inline CommandResult run_command(const std::string& command, int timeout_s = 120) {
  CommandResult r;
  const std::string bounded = "timeout " + std::to_string(timeout_s) + " " + command + " 2>&1";
  FILE* p = ::popen(bounded.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return r;
}

}  // namespace fieldbrain::server::testing
