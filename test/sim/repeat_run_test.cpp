// Issue 40 item 1: the simulator against a server that remembers robots. A JSON run keeps the
// tokens the server issued (tokens.json in its output directory) and the next run claims the
// same robot ids with them; without them the refusal says what to do; --robot-id and --token
// name one robot by hand; a repeated binary run of two robots keeps both (the second robot's
// handshake while the first one's save loads makes a twin, never closing the first).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/sim/sim_run.h"
#include "test/sim/sim_server.h"
#include "test/support/catch.h"
#include "test/support/skip.h"

using namespace fieldbrain::sim;
using namespace fieldbrain::sim::testing;
namespace fs = std::filesystem;

namespace {

SimOptions json_run(const SimTestServer& server, const fs::path& out, int robots) {
  SimOptions o;
  o.server = server.server();
  o.framing = Framing::JsonLines;
  o.robots = robots;
  o.cycles = 12;
  o.out_dir = out.string();
  o.progress = false;
  o.timeout_s = 30;
  o.baseline = false;
  o.reconnect.give_up_after_s = 0;  // a refusal here must be an error, not a retry
  return o;
}

}  // namespace

TEST_CASE("A repeated JSON run claims the same robot ids with the tokens it kept",
          "[sim][identity]") {
  if (!sim_test_server_built()) FIELDBRAIN_SKIP("fieldbrain-server is not in this build");
  const fs::path dir = sim_test_dir("fieldbrain-sim-repeat");
  SimTestServer server(dir / "server");
  if (!server.start()) FAIL("the server did not start:\n" << server.log());

  const SimReport first = run_sim(json_run(server, dir / "out", 2));
  INFO("first summary:\n" << first.summary.dump(2));
  REQUIRE(first.ok());
  const auto tokens = read_json_file(dir / "out" / "tokens.json");
  CHECK(tokens.size() == 2);
  CHECK(tokens.contains("sim-0"));
  CHECK(tokens.contains("sim-1"));
  CHECK((fs::status(dir / "out" / "tokens.json").permissions() & fs::perms::others_read) ==
        fs::perms::none);

  // The same command again: accepted with the kept tokens, the same brains resumed.
  const SimReport second = run_sim(json_run(server, dir / "out", 2));
  INFO("second summary:\n" << second.summary.dump(2));
  REQUIRE(second.ok());
  for (int i = 0; i < 2; ++i) {
    CHECK(second.robots[i].robot_key == first.robots[i].robot_key);
    CHECK(second.robots[i].start_cycle >= 12);  // its brain went on, not a fresh one
    CHECK(second.robots[i].cycles == 12);
  }

  {  // without the tokens file the refusal names the file and what to do
    const SimReport lost = run_sim(json_run(server, dir / "elsewhere", 1));
    REQUIRE(lost.robots.size() == 1);
    REQUIRE(lost.robots[0].errors.size() == 1);
    CHECK_THAT(lost.robots[0].errors[0], Catch::Contains("2005"));
    CHECK_THAT(lost.robots[0].errors[0], Catch::Contains("tokens file"));
    CHECK_THAT(lost.robots[0].errors[0], Catch::Contains("--token"));
    CHECK(lost.robots[0].cycles == 0);
  }
  {  // --robot-id and --token claim one robot by hand, and the token is kept
    SimOptions o = json_run(server, dir / "by-hand", 1);
    o.robot_id = "sim-1";
    o.token = tokens["sim-1"].get<std::string>();
    const SimReport r = run_sim(o);
    INFO(r.summary.dump(2));
    REQUIRE(r.ok());
    CHECK(r.robots[0].robot_key == "sim-1");
    CHECK(read_json_file(dir / "by-hand" / "tokens.json")["sim-1"] == tokens["sim-1"]);
  }
  CHECK(server.stop() == 0);
  fs::remove_all(dir);
}

TEST_CASE("A repeated binary run of two robots keeps both robots and says whose key is which",
          "[sim][identity]") {
  if (!sim_test_server_built()) FIELDBRAIN_SKIP("fieldbrain-server is not in this build");
  const fs::path dir = sim_test_dir("fieldbrain-sim-repeat-binary");
  SimTestServer server(dir / "server");
  if (!server.start()) FAIL("the server did not start:\n" << server.log());
  SimOptions o = json_run(server, dir / "out", 2);
  o.framing = Framing::B;
  o.monitor = server.monitor();
  for (int run = 0; run < 2; ++run) {
    CAPTURE(run);
    const SimReport r = run_sim(o);
    INFO("summary:\n" << r.summary.dump(2));
    REQUIRE(r.ok());  // no robot lost to the other's takeover
    REQUIRE(r.robots.size() == 2);
    CHECK(r.robots[0].robot_key == "picarx_12s_6m");
    CHECK(r.robots[1].robot_key == "picarx_12s_6m#2");
    CHECK(r.robots[0].cycles == 12);
    CHECK(r.robots[1].cycles == 12);
    CHECK(r.slices.size() == 6);  // every robot's slices, none skipped
  }
  CHECK(server.log().find("still waiting for the load") == std::string::npos);
  CHECK(server.stop() == 0);
  fs::remove_all(dir);
}

TEST_CASE("A robot whose key is unknown says why wherever the key would be", "[sim][identity]") {
  // Binary robots are keyed by the server; without a monitor the simulator cannot know it.
  const fs::path dir = sim_test_dir("fieldbrain-sim-keynote");
  SimOptions o;
  o.controller = ControllerKind::Forward;
  o.cycles = 5;
  o.progress = false;
  o.out_dir = dir.string();
  const SimReport r = run_sim(o);
  REQUIRE(r.robots.size() == 1);
  CHECK(r.robots[0].robot_key.empty());
  CHECK(r.robots[0].key_note == "not a brain run");
  CHECK(read_json_file(dir / "summary.json")["robots"][0]["robot_key_note"] == "not a brain run");
  fs::remove_all(dir);
}
