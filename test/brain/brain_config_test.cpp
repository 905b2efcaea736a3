#include "test/support/catch.h"

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

namespace fieldbrain {

TEST_CASE("The profile is fieldbrain unless the config says legacy", "[brain]") {
  const BrainConfig defaults;
  CHECK(defaults.profile == BrainProfile::Fieldbrain);
  CHECK(defaults.legacy.clock == LegacyClock::Fixed);
  CHECK(defaults.legacy.planner == LegacyPlanner::Off);
  CHECK(defaults.legacy.reward == LegacyReward::Drop);
  CHECK(nlohmann::json{{"resolution", 16}}.get<BrainConfig>().profile == BrainProfile::Fieldbrain);

  SECTION("each name parses and survives a round trip") {
    const auto c = nlohmann::json{{"profile", "legacy"}, {"legacy_clock", "wall"},
                                  {"legacy_planner", "sync"}, {"legacy_reward", "append"}}
                       .get<BrainConfig>();
    CHECK(c.profile == BrainProfile::Legacy);
    CHECK(c.legacy.clock == LegacyClock::Wall);
    CHECK(c.legacy.planner == LegacyPlanner::Sync);
    CHECK(c.legacy.reward == LegacyReward::Append);
    const nlohmann::json j = c;
    CHECK(j.at("profile") == "legacy");
    CHECK(j.at("legacy_clock") == "wall");
    CHECK(j.at("legacy_planner") == "sync");
    const auto back = j.get<BrainConfig>();
    CHECK(back.profile == BrainProfile::Legacy);
    CHECK(back.legacy.clock == LegacyClock::Wall);
    CHECK(back.legacy.planner == LegacyPlanner::Sync);
    CHECK(back.legacy.reward == LegacyReward::Append);
    const auto async = nlohmann::json{{"profile", "legacy"}, {"legacy_planner", "async"}};
    CHECK(async.get<BrainConfig>().legacy.planner == LegacyPlanner::Async);
    CHECK(nlohmann::json(async.get<BrainConfig>()).at("legacy_planner") == "async");
    CHECK(nlohmann::json{{"profile", "fieldbrain"}}.get<BrainConfig>().profile ==
          BrainProfile::Fieldbrain);
  }
  SECTION("an unknown name is refused, naming the key and the choices") {
    const auto msg = error_of({{"profile", "original"}});
    CHECK_THAT(msg, Catch::Contains("profile") && Catch::Contains("original") &&
                        Catch::Contains("\"legacy\"") && Catch::Contains("\"fieldbrain\""));
    CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_clock", "slow"}}),
               Catch::Contains("legacy_clock") && Catch::Contains("\"fixed\""));
    CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_planner", "background"}}),
               Catch::Contains("legacy_planner") && Catch::Contains("\"sync\"") &&
                   Catch::Contains("\"async\""));
    CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_reward", "keep"}}),
               Catch::Contains("legacy_reward") && Catch::Contains("\"append\""));
    CHECK_THAT(error_of({{"profile", 1}}), Catch::Contains("profile"));
  }
}

TEST_CASE("The legacy profile refuses the GPU, naming the key", "[brain]") {
  CHECK_THAT(error_of({{"profile", "legacy"}, {"device", "cuda"}}),
             Catch::Contains("device") && Catch::Contains("legacy"));
  CHECK_THAT(error_of({{"profile", "legacy"}, {"device", "cuda:1"}}), Catch::Contains("device"));
  CHECK(error_of({{"profile", "legacy"}, {"device", "cpu"}}).empty());
  CHECK(error_of({{"device", "cuda"}}).empty());
}

TEST_CASE("Keys of the other profile: the legacy profile ignores the fieldbrain cycle's, legacy "
          "keys away from their defaults need the legacy profile", "[brain]") {
  // configs/default.json with only the profile changed must start.
  CHECK(error_of({{"profile", "legacy"}, {"field_step", "fast"}, {"attractor_capacity", 3},
                  {"telemetry_every", 7}})
            .empty());
  CHECK_THAT(error_of({{"legacy_clock", "wall"}}),
             Catch::Contains("legacy_clock") && Catch::Contains("\"profile\": \"legacy\""));
  CHECK_THAT(error_of({{"profile", "fieldbrain"}, {"legacy_planner", "sync"}}),
             Catch::Contains("legacy_planner"));
  CHECK_THAT(error_of({{"legacy_reward", "append"}}), Catch::Contains("legacy_reward"));
  // A config written by to_json carries every key at its default: it reads back.
  CHECK(error_of(nlohmann::json(BrainConfig{})).empty());
}

}  // namespace fieldbrain
