#include <catch2/catch.hpp>

#include "brain/brain_config.h"

namespace fieldbrain {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    j.get<BrainConfig>();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("A brain config survives a JSON round trip", "[brain]") {
  BrainConfig c;
  c.sensory_dim = 17;
  c.motor_dim = 6;
  c.resolution = 12;
  c.attractor_capacity = 3;
  c.seed = 123456789012345ULL;
  c.telemetry_every = 9;
  c.field_step = "fast";
  const auto back = nlohmann::json(c).get<BrainConfig>();
  CHECK(back.sensory_dim == 17);
  CHECK(back.motor_dim == 6);
  CHECK(back.resolution == 12);
  CHECK(back.attractor_capacity == 3);
  CHECK(back.seed == 123456789012345ULL);
  CHECK(back.telemetry_every == 9);
  CHECK(back.field_step == "fast");
  CHECK(back.device == "cpu");
}

TEST_CASE("Missing config keys keep their defaults", "[brain]") {
  const auto c = nlohmann::json{{"resolution", 16}}.get<BrainConfig>();
  CHECK(c.resolution == 16);
  CHECK(c.sensory_dim == BrainConfig{}.sensory_dim);
}

TEST_CASE("An unknown config key is refused and named", "[brain]") {
  const auto msg = error_of({{"resolution", 16}, {"resolutoin", 32}});
  CHECK_THAT(msg, Catch::Contains("resolutoin"));
}

TEST_CASE("A config key of the wrong type is named", "[brain]") {
  CHECK_THAT(error_of({{"sensory_dim", "many"}}), Catch::Contains("sensory_dim"));
}

TEST_CASE("S, M and R out of range are refused and named", "[brain]") {
  CHECK_THAT(error_of({{"sensory_dim", 0}}), Catch::Contains("sensory_dim"));
  CHECK_THAT(error_of({{"sensory_dim", 1025}}), Catch::Contains("sensory_dim"));
  CHECK_THAT(error_of({{"motor_dim", 0}}), Catch::Contains("motor_dim"));
  CHECK_THAT(error_of({{"motor_dim", 2000}}), Catch::Contains("motor_dim"));
  CHECK_THAT(error_of({{"resolution", 7}}), Catch::Contains("resolution"));
  CHECK_THAT(error_of({{"resolution", 129}}), Catch::Contains("resolution"));
  CHECK(error_of({{"sensory_dim", 1024}, {"motor_dim", 1}, {"resolution", 128}}).empty());
  CHECK(error_of({{"sensory_dim", 1}, {"motor_dim", 1024}, {"resolution", 8}}).empty());
}

}  // namespace fieldbrain
