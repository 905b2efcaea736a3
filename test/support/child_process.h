// A child process for the tests that need real processes, signals and exit codes (the server
// tests, the operator's scripts, the fleet tests): spawned with its stdout and stderr in a log
// file (or inherited), SIGKILLed at destruction if still running.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fieldbrain::test {

struct ChildProcess {
  // Runs `args` (args[0] is the executable's path); `log_path` "" inherits the test's output.
  // `append` keeps an earlier run's lines (a server restarted on the same log).
  explicit ChildProcess(std::vector<std::string> args, const std::string& log_path = "",
                        bool append = false) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!log_path.empty()) {
      posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                       O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ChildProcess() { kill(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  void signal(int sig) const {
    if (pid > 0) ::kill(pid, sig);
  }
  // SIGSTOP, returning only once every thread of the child has stopped: kill() merely queues
  // the signal, and a multi-threaded child (etcd's Go runtime) can still answer a request in
  // the moment before its last thread stops, which made "a paused etcd does not answer" flaky
  // under a loaded ctest -j. waitpid(WUNTRACED) reports the completed group stop.
  void stop() {
    if (pid <= 0) return;
    ::kill(pid, SIGSTOP);
    int status = 0;
    while (::waitpid(pid, &status, WUNTRACED) == pid) {
      if (WIFSTOPPED(status)) return;
      if (WIFEXITED(status) || WIFSIGNALED(status)) {
        pid = -1;
        return;
      }
    }
  }
  // SIGCONT after stop(); the child runs again when this returns (waitpid(WCONTINUED)).
  void resume() {
    if (pid <= 0) return;
    ::kill(pid, SIGCONT);
    int status = 0;
    while (::waitpid(pid, &status, WCONTINUED) == pid) {
      if (WIFCONTINUED(status)) return;
      if (WIFEXITED(status) || WIFSIGNALED(status)) {
        pid = -1;
        return;
      }
    }
  }
  // SIGKILL (a stopped process is woken first so it can die) and reap.
  void kill() {
    if (pid <= 0) return;
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
  // Whether it still runs (one that ended is reaped here).
  bool alive() {
    if (pid <= 0) return false;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      pid = -1;
      return false;
    }
    return true;
  }
  // Waits (bounded) for the exit; returns the exit status (128 + signal), or -1 on timeout.
  int wait_exit(double timeout_s) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  pid_t pid = -1;
};

}  // namespace fieldbrain::test
