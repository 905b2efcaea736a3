// The slow-robot warning (app/server/worker/latency_watch.h): when it is due, what it says, and the
// config keys that set the budget.
#include "app/server/worker/latency_watch.h"

#include "test/support/catch.h"

#include "app/server/config/server_config.h"
#include "app/server/web/web_messages.h"

using namespace fieldbrain::server;
using std::chrono::seconds;

TEST_CASE("A robot whose replies stay over its loop budget is warned about once a minute",
          "[server]") {
  LatencyWatch watch(50, "robots.loop_budget_ms");
  const auto t0 = LatencyWatch::Clock::time_point{} + seconds(1000);
  int warnings = 0;
  for (int i = 0; i < 10; ++i) warnings += watch.observe(300, t0);  // a new brain's first replies
  CHECK(warnings == 0);
  CHECK_FALSE(watch.over_budget());
  CHECK(watch.observe(300, t0));  // past the warm-up, smoothed 300 ms > 50 ms
  CHECK(watch.over_budget());
  CHECK(watch.slow_replies() == 1);
  for (int i = 1; i <= 59; ++i) CHECK_FALSE(watch.observe(300, t0 + seconds(i)));
  CHECK(watch.observe(400, t0 + seconds(61)));  // a minute later: the next line
  CHECK(watch.slow_replies() == 60);            // the 59 held back and this one

  const std::string line = slow_robot_warning(
      "picarx_12s_6m", watch,
      SpeedAdvice::for_brain({{"profile", "fieldbrain"}, {"resolution", 32}}), 3);
  INFO(line);
  CHECK_THAT(line, Catch::Contains("robot picarx_12s_6m") &&
                       Catch::Contains("replies take 320 ms") && Catch::Contains("last 400 ms") &&
                       Catch::Contains("50 ms loop budget") &&
                       Catch::Contains("robots.loop_budget_ms") &&
                       Catch::Contains("R = 32; --resolution 24 costs 42% of it") &&
                       Catch::Contains("fewer robots (3 connected)") && Catch::Contains("GPU"));
}

TEST_CASE("The legacy profile's slow-robot advice offers neither a GPU nor an unchecked resolution",
          "[server]") {
  LatencyWatch watch(50, "robots.loop_budget_ms");
  const auto t0 = LatencyWatch::Clock::time_point{} + seconds(1000);
  bool warned = false;
  for (int i = 0; i < 11; ++i) warned = watch.observe(300, t0);
  REQUIRE(warned);
  SECTION("at R = 32 it suggests 16, the other resolution parity is checked at") {
    const std::string line = slow_robot_warning(
        "picarx_12s_6m", watch, SpeedAdvice::for_brain({{"profile", "legacy"}, {"resolution", 32}}),
        2);
    INFO(line);
    CHECK_THAT(line, Catch::Contains("--resolution 16 costs") &&
                         Catch::Contains("parity is checked there") &&
                         Catch::Contains("fewer robots (2 connected)") &&
                         Catch::Contains("fieldbrain profile"));
    CHECK_THAT(line, !Catch::Contains("--resolution 24") && !Catch::Contains("docs/gpu.md") &&
                         !Catch::Contains("run the brain on a GPU"));
  }
  SECTION("at R = 16 it suggests no resolution at all") {
    const std::string line = slow_robot_warning(
        "picarx_12s_6m", watch, SpeedAdvice::for_brain({{"profile", "legacy"}, {"resolution", 16}}),
        1);
    INFO(line);
    CHECK_THAT(line, !Catch::Contains("--resolution") && !Catch::Contains("docs/gpu.md"));
    CHECK_THAT(line, Catch::Contains("Serve fewer robots (1 connected)") &&
                         Catch::Contains("fieldbrain profile"));
  }
}

TEST_CASE("One slow reply among fast ones, and an unwatched robot, never warn", "[server]") {
  const auto t0 = LatencyWatch::Clock::time_point{} + seconds(1000);
  LatencyWatch spiky(50, "robots.loop_budget_ms");
  for (int i = 0; i < 30; ++i) CHECK_FALSE(spiky.observe(5, t0));
  CHECK_FALSE(spiky.observe(200, t0));  // a save or a busy neighbour: smoothed 44 ms
  CHECK_FALSE(spiky.over_budget());
  for (int i = 0; i < 10; ++i) CHECK_FALSE(spiky.observe(5, t0));

  LatencyWatch off(0, "robots.json_loop_budget_ms");
  for (int i = 0; i < 30; ++i) CHECK_FALSE(off.observe(1000, t0));
  CHECK_FALSE(off.over_budget());
}

TEST_CASE("The loop budget keys default to 50 ms for binary robots and off for JSON ones",
          "[server]") {
  auto parse = [](const char* text) { return nlohmann::json::parse(text).get<ServerConfig>(); };
  const ServerConfig defaults = parse("{}");
  CHECK(defaults.robots.loop_budget_ms == 50);
  CHECK(defaults.robots.json_loop_budget_ms == 0);
  CHECK(parse(R"({"robots": {"loop_budget_ms": 100}})").robots.loop_budget_ms == 100);
  CHECK_THROWS_WITH(parse(R"({"robots": {"loop_budget_ms": -1}})").validate(),
                    Catch::Contains("robots.loop_budget_ms"));
  CHECK_THROWS_WITH(parse(R"({"robots": {"json_loop_budget_ms": "fast"}})"),
                    Catch::Contains("robots.json_loop_budget_ms"));
  CHECK(nlohmann::json(defaults)["robots"]["loop_budget_ms"] == 50);
}

TEST_CASE("The web page's robot list carries each robot's budget and whether it is over it",
          "[server][web]") {
  RobotView slow;
  slow.key = "picarx_12s_6m";
  slow.loop_budget_ms = 50;
  slow.latency_smoothed_ms = 120;
  slow.over_budget = true;
  const auto msg = web::robots_message({slow}, {}, nlohmann::json::object(), {}, 32, 0.0);
  const auto& r = msg["robots"][0];
  CHECK(r["over_budget"] == true);
  CHECK(r["loop_budget_ms"] == 50);
  CHECK(r["latency_smoothed_ms"] == 120);
}
