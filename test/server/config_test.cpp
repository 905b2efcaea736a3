// configs/*.json parse; unknown keys and out-of-range values are refused with the key's name.
#include "test/support/catch.h"

#include "app/server/config/server_config.h"

using namespace fieldbrain::server;

TEST_CASE("the shipped configs load and validate", "[server]") {
  for (const char* name : {"default.json", "picarx.json"}) {
    INFO(name);
    ServerConfig c = load_server_config(std::string(FIELDBRAIN_SOURCE_DIR) + "/configs/" + name);
    CHECK_NOTHROW(c.validate());
    CHECK(c.port == 9999);
    CHECK(c.monitor_port == 9998);
    CHECK(c.brain.is_object());
  }
  ServerConfig p = load_server_config(std::string(FIELDBRAIN_SOURCE_DIR) + "/configs/picarx.json");
  CHECK(p.brain.value("sensory_dim", 0) == 12);
  CHECK(p.brain.value("motor_dim", 0) == 6);
}

TEST_CASE("unknown or ill-typed config keys are refused by name", "[server]") {
  auto parse = [](const char* text) { return nlohmann::json::parse(text).get<ServerConfig>(); };
  CHECK_THROWS_WITH(parse(R"({"prot": 9999})"), Catch::Contains("prot"));
  CHECK_THROWS_WITH(parse(R"({"port": "high"})"), Catch::Contains("port"));
  CHECK_THROWS_WITH(parse(R"({"brain": 3})"), Catch::Contains("brain"));
  ServerConfig c = parse(R"({"port": 70000})");
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("port"));
  ServerConfig d = parse(R"({"log_level": "loud"})");
  CHECK_THROWS_WITH(d.validate(), Catch::Contains("log_level"));
  ServerConfig ok = parse(R"({"port": 1234, "max_bad_frames": 3})");
  CHECK(ok.port == 1234);
  CHECK(ok.max_bad_frames == 3);
  CHECK(ok.monitor_port == 9998);  // untouched keys keep defaults
}
