// Issue 36 item 4, in process: the state directory's lock (app/server/worker/state_dir_lock.h).
// flock locks belong to an open file, so two locks taken in one process conflict exactly as
// two servers' do. The two-process test (SIGKILL included) is state_dir_lock_brain_test.cpp.
#include "app/server/worker/state_dir_lock.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "test/server/fresh_dir.h"
#include "test/support/catch.h"
#include "test/support/files.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

TEST_CASE("a second server alone on one state directory is refused, naming the holder",
          "[server][state-lock]") {
  const auto dir = fresh_dir("fieldbrain-state-lock");
  auto first = std::make_unique<StateDirLock>(dir.string(), StateDirLock::Mode::kAlone);
  const std::string details = fieldbrain::test::file_text((dir / "server.lock").string());
  CHECK(details.find("\"pid\":" + std::to_string(::getpid())) != std::string::npos);
  CHECK_THROWS_WITH(StateDirLock(dir.string(), StateDirLock::Mode::kAlone),
                    Catch::Contains("'" + dir.string() + "' is in use"));
  CHECK_THROWS_WITH(StateDirLock(dir.string(), StateDirLock::Mode::kAlone),
                    Catch::Contains("pid " + std::to_string(::getpid())));
  // A fleet server may not join a directory a server alone holds either.
  CHECK_THROWS_WITH(StateDirLock(dir.string(), StateDirLock::Mode::kFleet),
                    Catch::Contains("is in use"));
  // Released with its holder: the next one starts.
  first.reset();
  CHECK_NOTHROW(StateDirLock(dir.string(), StateDirLock::Mode::kAlone));
}

TEST_CASE("fleet servers share a state directory, but not with a server alone",
          "[server][state-lock]") {
  const auto dir = fresh_dir("fieldbrain-state-lock-fleet");
  StateDirLock s1(dir.string(), StateDirLock::Mode::kFleet);
  StateDirLock s2(dir.string(), StateDirLock::Mode::kFleet);
  CHECK_THROWS_WITH(StateDirLock(dir.string(), StateDirLock::Mode::kAlone),
                    Catch::Contains("fleet servers"));
}

TEST_CASE("persistence off locks nothing", "[server][state-lock]") {
  StateDirLock a("", StateDirLock::Mode::kAlone);
  CHECK_NOTHROW(StateDirLock("", StateDirLock::Mode::kAlone));
}
