// Issue 36 item 4 with real processes: a second fieldbrain-server on the state directory of a
// running one refuses to start (exit 2) naming the first; once the first is SIGKILLed, the
// kernel has dropped its lock and a new server starts on the directory at once.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "test/server/fresh_dir.h"
#include "test/server/server_process.h"
#include "test/support/catch.h"
#include "test/support/files.h"

using namespace fieldbrain::server::testing;
namespace fs = std::filesystem;

namespace {

std::string server_command(const fs::path& state, const fs::path& ready) {
  return "'" + std::string(FIELDBRAIN_SERVER_EXE) +
         "' --host 127.0.0.1 --port 0 --monitor-port -1 --resolution 8 --log-level warn"
         " --state-dir '" +
         state.string() + "' --ready-file '" + ready.string() + "'";
}

// Waits (bounded) for a server's ready file.
bool became_ready(const fs::path& ready, ChildProcess& proc) {
  for (int i = 0; i < 1200; ++i) {
    if (fs::exists(ready)) return true;
    if (!proc.alive()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("a second server on a running server's state directory refuses to start naming it",
          "[server][state-lock]") {
  const auto dir = fresh_dir("fieldbrain-two-servers");
  const auto state = dir / "state";
  const std::string log = (dir / "first.log").string();
  ChildProcess first(
      {"/bin/sh", "-c",
       "exec " + server_command(state, dir / "first.ready") + " > '" + log + "' 2>&1"});
  REQUIRE(became_ready(dir / "first.ready", first));

  const CommandResult second = run_command(server_command(state, dir / "second.ready"), 60);
  INFO(second.output);
  CHECK(second.exit_code == 2);
  CHECK(second.output.find("is in use") != std::string::npos);
  CHECK(second.output.find("pid " + std::to_string(first.pid)) != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "second.ready"));

  // SIGKILL leaves no stale lock: the next server starts.
  ::kill(first.pid, SIGKILL);
  first.wait_exit(10);
  ChildProcess third({"/bin/sh", "-c",
                      "exec " + server_command(state, dir / "third.ready") + " > '" +
                          (dir / "third.log").string() + "' 2>&1"});
  CHECK(became_ready(dir / "third.ready", third));
  INFO(fieldbrain::test::file_text(dir / "third.log"));
  ::kill(third.pid, SIGTERM);
  CHECK(third.wait_exit(30) == 0);
}
