// The "robots" config object: defaults, refusal of unknown keys and bad values by name, and
// provisioned tokens never printed back.
#include "test/support/catch.h"

#include "app/server/config/server_config.h"

using namespace fieldbrain::server;

TEST_CASE("the robots config object is validated key by key", "[server]") {
  auto parse = [](const char* text) { return nlohmann::json::parse(text).get<ServerConfig>(); };
  ServerConfig defaults = parse("{}");
  CHECK(defaults.robots.require_tokens);
  CHECK(defaults.robots.binary_key == "profile");
  CHECK_NOTHROW(defaults.validate());
  CHECK_THROWS_WITH(parse(R"({"robots": {"max_brains": 3}})"),
                    Catch::Contains("robots.max_brains"));
  CHECK_THROWS_WITH(parse(R"({"robots": {"require_tokens": "yes"}})"),
                    Catch::Contains("robots.require_tokens"));
  CHECK_THROWS_WITH(parse(R"({"robots": {"binary_key": "mac"}})").validate(),
                    Catch::Contains("robots.binary_key"));
  CHECK_THROWS_WITH(parse(R"({"robots": {"max_live_brains": 0}})").validate(),
                    Catch::Contains("robots.max_live_brains"));
  CHECK_THROWS_WITH(parse(R"({"robots": {"state_dir_max_bytes": -1}})").validate(),
                    Catch::Contains("robots.state_dir_max_bytes"));
  CHECK_THROWS_WITH(parse(R"({"robots": {"tokens": {"r1": "short"}}})").validate(),
                    Catch::Contains("robots.tokens"));
  ServerConfig fleet = parse(
      R"({"robots": {"binary_key": "address", "tokens": {"r1": "a-long-secret"},
                     "address_names": {"10.0.0.7": "kitchen"}, "max_live_brains": 20}})");
  CHECK_NOTHROW(fleet.validate());
  CHECK(fleet.robots.max_live_brains == 20);
  CHECK(fleet.robots.address_names.at("10.0.0.7") == "kitchen");
  const std::string printed = nlohmann::json(fleet).dump();
  CHECK(printed.find("a-long-secret") == std::string::npos);
  CHECK(printed.find("<provisioned>") != std::string::npos);
}
