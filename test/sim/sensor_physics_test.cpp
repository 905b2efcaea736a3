// The simulated sensors and body against geometry worked out by hand in each test.
#include "test/support/catch.h"
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "app/sim/arena.h"
#include "app/sim/picarx_body.h"
#include "app/sim/picarx_sensors.h"
#include "app/sim/sim_robot.h"

using namespace fieldbrain::sim;

namespace {


// A bare 4 x 2 m room, optionally with extra map keys.
Arena room(nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json j = {{"name", "room"}, {"size", {4.0, 2.0}}, {"floor_gray", 0.8}};
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j.get<Arena>();
}

std::vector<float> sense_at(const Arena& a, Vec2 p, double heading_deg) {
  const PicarxGeometry g;
  CarState car;
  car.pose = {p, heading_deg * kPi / 180.0};
  Battery battery;
  AudioState audio;
  std::mt19937_64 rng(1);
  return sense(g, a, car, battery, audio, SensorNoise{}, rng);
}

}  // namespace

TEST_CASE("The sensory vector has the 12 values of the HEAD PiCar-X client", "[sim]") {
  const auto s = sense_at(room(), {1.0, 1.0}, 0.0);
  REQUIRE(s.size() == 12);
  for (float v : s) CHECK((v >= 0.0f && v <= 1.0f));
  SECTION("battery is volts / 10 of a charged 2S pack") {
    CHECK(s[4] * 10.0 == Approx(Battery{}.volts).margin(1e-5));
    CHECK(s[4] > 0.6f);
  }
  SECTION("audio features are zero without a sound source") {
    for (int i = 5; i < 12; ++i) CHECK(s[i] == 0.0f);
  }
}

TEST_CASE("Ultrasonic reading is the ray-cast distance over 4 m", "[sim]") {
  const PicarxGeometry g;
  const Arena a = room();
  const double f = g.ultrasonic_forward;
  SECTION("straight at the right wall") {
    // Sensor at x = 1 + f looking along +x; the wall is at x = 4.
    CHECK(sense_at(a, {1.0, 1.0}, 0)[3] == Approx((4.0 - (1.0 + f)) / 4.0).margin(1e-5));
  }
  SECTION("up at the top wall") {
    CHECK(sense_at(a, {1.0, 1.0}, 90)[3] == Approx((2.0 - (1.0 + f)) / 4.0).margin(1e-5));
  }
  SECTION("at 30 degrees to the top wall") {
    const double ys = 1.0 + f * 0.5;  // sin 30
    CHECK(sense_at(a, {1.0, 1.0}, 30)[3] == Approx((2.0 - ys) / 0.5 / 4.0).margin(1e-5));
  }
  SECTION("a round obstacle in front") {
    const Arena b = room({{"circles", {{2.0, 1.0, 0.2}}}});
    CHECK(sense_at(b, {1.0, 1.0}, 0)[3] == Approx((2.0 - 0.2 - (1.0 + f)) / 4.0).margin(1e-5));
  }
  SECTION("a box face in front") {
    const Arena b = room({{"boxes", {{2.5, 0.5, 3.0, 1.5}}}});
    CHECK(sense_at(b, {1.0, 1.0}, 0)[3] == Approx((2.5 - (1.0 + f)) / 4.0).margin(1e-5));
  }
  SECTION("nothing within 4 m reads 1.0") {
    const Arena wide = nlohmann::json{{"size", {10.0, 2.0}}}.get<Arena>();
    CHECK(sense_at(wide, {1.0, 1.0}, 0)[3] == 1.0f);
  }
}

TEST_CASE("Grayscale sensors read the line only where they are over it", "[sim]") {
  const PicarxGeometry g;
  // A horizontal line along y = 1, 3 cm wide, much darker than the floor.
  const Arena a =
      room({{"line", {{"gray", 0.1}, {"width", 0.03}, {"points", {{0.0, 1.0}, {4.0, 1.0}}}}}});
  SECTION("far from the line every sensor reads the floor") {
    const auto s = sense_at(a, {1.0, 1.5}, 0);
    CHECK(s[0] == Approx(0.8));
    CHECK(s[1] == Approx(0.8));
    CHECK(s[2] == Approx(0.8));
  }
  SECTION("centred over the line while driving along it") {
    const auto s = sense_at(a, {1.0, 1.0}, 0);
    CHECK(s[1] == Approx(0.1));
    // The side sensors sit gray_spacing away; off the line when that exceeds the half width.
    REQUIRE(g.gray_spacing > 0.015);
    CHECK(s[0] == Approx(0.8));
    CHECK(s[2] == Approx(0.8));
  }
  SECTION("index 0 is the right-hand sensor") {
    // Heading +x, the right side is -y: shift the car up by one spacing so the right sensor
    // lies on the line.
    const auto s = sense_at(a, {1.0, 1.0 + g.gray_spacing}, 0);
    CHECK(s[0] == Approx(0.1));
    CHECK(s[1] == Approx(0.8));
    CHECK(s[2] == Approx(0.8));
  }
  SECTION("crossing the line at right angles puts all three over it") {
    // Heading +y: the sensors sit gray_forward ahead of the centre.
    const auto s = sense_at(a, {1.0, 1.0 - g.gray_forward}, 90);
    CHECK(s[0] == Approx(0.1));
    CHECK(s[1] == Approx(0.1));
    CHECK(s[2] == Approx(0.1));
  }
}

TEST_CASE("A synthetic sound source fades with distance", "[sim]") {
  const Arena a =
      room({{"sound", {{"x", 3.0}, {"y", 1.0}, {"frequency_hz", 440}, {"level", 0.6}}}});
  const auto s = sense_at(a, {1.0, 1.0}, 0);
  const double d = 2.0;
  CHECK(s[5] == Approx(0.6 / (1 + d * d)).margin(1e-6));
  CHECK(s[7] == Approx(s[5]));  // 440 Hz is in the 250-1000 Hz band
  CHECK(s[6] == 0.0f);
  CHECK(s[10] == Approx(std::log10(440.0 / 20.0) / std::log10(400.0)).margin(1e-6));
  CHECK(s[11] == Approx(5 * s[5]).margin(1e-6));  // first cycle: onset from silence
}

TEST_CASE("Collisions stop the car and are counted", "[sim]") {
  const PicarxGeometry g;
  const Arena a = room({{"circles", {{2.0, 1.0, 0.2}}}});
  SECTION("disc overlap tests") {
    CHECK_FALSE(a.disc_collides({1.0, 1.0}, g.radius));
    CHECK(a.disc_collides({4.0 - g.radius + 0.01, 1.0}, g.radius));  // right wall
    CHECK_FALSE(a.disc_collides({4.0 - g.radius - 0.01, 1.0}, g.radius));
    CHECK(a.disc_collides({2.0 - 0.2 - g.radius + 0.01, 1.0}, g.radius));  // the circle
    CHECK_FALSE(a.disc_collides({2.0 - 0.2 - g.radius - 0.01, 1.0}, g.radius));
  }
  SECTION("driving full ahead into the obstacle") {
    SimRobot robot(a, g, Pose{{1.0, 1.0}, 0.0}, 1, SensorNoise{});
    const std::vector<float> ahead = {1, 0, 0, 0, 0, 0};
    int steps = 0;
    while (robot.collisions() == 0 && steps < 1000) {
      robot.act(ahead);
      ++steps;
    }
    REQUIRE(robot.collisions() == 1);
    const double stop_x = robot.car().pose.position.x;
    // Stopped short of contact, within one step of it.
    CHECK(stop_x + g.radius < 1.8);
    CHECK(stop_x + g.radius > 1.8 - max_step_distance(g) - 1e-9);
    CHECK(robot.distance() == Approx(stop_x - 1.0).margin(1e-9));
    robot.act(ahead);
    CHECK(robot.collisions() == 2);
    CHECK(robot.car().pose.position.x == stop_x);
    CHECK(progress_reward(robot.last(), g) == -1.0f);
  }
  SECTION("free driving is not a collision and earns a positive reward") {
    SimRobot robot(a, g, Pose{{1.0, 0.5}, 0.0}, 1, SensorNoise{});
    robot.act({1, 0, 0, 0, 0, 0});
    CHECK(robot.collisions() == 0);
    // Full thrust moves the fastest possible step: reward 1.
    CHECK(progress_reward(robot.last(), g) == Approx(1.0f));
    robot.act({-1, 0, 0, 0, 0, 0});
    CHECK(progress_reward(robot.last(), g) == Approx(-1.0f));
  }
}

TEST_CASE("Kinematics: straight speed and turning sense", "[sim]") {
  const PicarxGeometry g;
  const Arena a = room();
  CarState car;
  car.pose = {{2.0, 1.0}, 0.0};
  SECTION("equal wheel duty d moves d * full speed * dt straight ahead") {
    MotorCommand cmd;
    cmd.left_duty = cmd.right_duty = 0.5;
    const auto out = step_car(g, a, cmd, car);
    CHECK(out.moved == Approx(0.5 * g.full_duty_speed * g.dt));
    CHECK(car.pose.position.y == Approx(1.0));
    CHECK(car.pose.heading == Approx(0.0));
  }
  SECTION("a faster right wheel turns left (counter-clockwise)") {
    MotorCommand cmd;
    cmd.left_duty = 0.2;
    cmd.right_duty = 0.6;
    step_car(g, a, cmd, car);
    CHECK(car.pose.heading > 0.0);
  }
  SECTION("positive steering turns right (clockwise) when driving forward") {
    MotorCommand cmd;
    cmd.left_duty = cmd.right_duty = 0.5;
    cmd.steering_deg = 20;
    step_car(g, a, cmd, car);
    const double v = 0.5 * g.full_duty_speed;
    CHECK(car.pose.heading == Approx(-v * std::tan(20 * kPi / 180) / g.wheelbase * g.dt));
  }
}

TEST_CASE("Arena maps reject unknown keys and bad values, and the default map loads", "[sim]") {
  CHECK_THROWS_WITH(
      (nlohmann::json{{"size", {4, 2}}, {"wals", nlohmann::json::array()}}.get<Arena>()),
      Catch::Contains("wals"));
  CHECK_THROWS((nlohmann::json{{"size", {4}}}.get<Arena>()));
  CHECK_THROWS((nlohmann::json{{"size", {4, 2}}, {"circles", {{1, 1, -1}}}}.get<Arena>()));
  CHECK_THROWS_WITH(load_arena("/nonexistent/map.json"), Catch::Contains("/nonexistent/map.json"));
  const Arena def = load_arena(default_arena_path());
  const PicarxGeometry g;
  REQUIRE_FALSE(def.start_poses.empty());
  for (int i = 0; i < 8; ++i) {
    CHECK_FALSE(def.disc_collides(start_pose(def, g, i, 1).position, g.radius));
  }
}
