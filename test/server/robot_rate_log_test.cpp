// The periodic per-robot rate/latency line (app/server/stats/robot_rate_log.h): when it is due,
// what its window holds, and that an interval of 0 turns it off.
#include "app/server/stats/robot_rate_log.h"

#include "test/support/catch.h"

using namespace fieldbrain::server;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("A robot's rate line is due once per interval and describes that window alone",
          "[server]") {
  RobotRateLog log;
  const auto t0 = RobotRateLog::Clock::time_point{} + seconds(500);
  const auto interval = seconds(60);
  // 20 replies a second for a minute, latencies 10 ms but one of 90 ms.
  int due = 0;
  for (int i = 0; i < 1200; ++i) {
    due += log.observe(i == 600 ? 90.0 : 10.0, t0 + milliseconds(50 * i), interval);
  }
  CHECK(due == 0);  // the last reply came at 59.95 s
  REQUIRE(log.observe(10.0, t0 + seconds(60), interval));
  const RobotRateLog::Window& w = log.last_window();
  CHECK(w.replies == 1201);
  CHECK(w.seconds == Approx(60.0));
  CHECK(w.max_ms == Approx(90.0));
  CHECK(w.mean_ms == Approx((1201 * 10.0 + 80.0) / 1201).margin(1e-9));
  const std::string line = robot_rate_line("picarx_12s_6m", w);
  INFO(line);
  CHECK_THAT(line, Catch::Contains("picarx_12s_6m: 1201 cycles in the last 60 s (20.0/s)") &&
                       Catch::Contains("max 90.0 ms"));

  // The next window starts empty: a slow minute is not averaged with the one before.
  for (int i = 1; i < 30; ++i) CHECK_FALSE(log.observe(500.0, t0 + seconds(60 + 2 * i), interval));
  REQUIRE(log.observe(500.0, t0 + seconds(120), interval));
  CHECK(log.last_window().replies == 30);
  CHECK(log.last_window().mean_ms == Approx(500.0));
}

TEST_CASE("An interval of 0 never logs a robot's rate", "[server]") {
  RobotRateLog log;
  const auto t0 = RobotRateLog::Clock::time_point{} + seconds(500);
  for (int i = 0; i < 100; ++i) {
    CHECK_FALSE(log.observe(5.0, t0 + seconds(i * 3600), RobotRateLog::Clock::duration::zero()));
  }
}
