// The brain's keys get the same errors as the server's (issue 25 item 3): a fraction where a
// whole number belongs is refused (never truncated), field_step lists its valid values, typos
// get "did you mean", and fieldbrain-server names the config file they came from.
#include "test/support/catch.h"
#include <fstream>
#include <set>
#include <string>

#include "brain/brain_config.h"
#include "brain/config_reader.h"
#include "test/server/fresh_dir.h"
#include "test/server/server_process.h"

using fieldbrain::BrainConfig;
using nlohmann::json;

namespace {

std::string brain_error(const json& j) {
  try {
    j.get<BrainConfig>();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("brain.resolution 16.5 is refused instead of truncated to 16", "[server][config]") {
  CHECK(brain_error({{"resolution", 16.5}}) ==
        "config key 'brain.resolution' must be a whole number, not 16.5 (a number with a "
        "fraction)");
  CHECK(json{{"resolution", 16.0}}.get<BrainConfig>().resolution == 16);
  CHECK(brain_error({{"seed", -1}}) ==
        "config key 'brain.seed' must be a whole number >= 0, not -1 (a whole number)");
  CHECK(brain_error({{"resolution", 4}}) ==
        "config key 'brain.resolution' = 4 is out of range [8, 128]");
}

TEST_CASE("a brain.field_step typo is refused with the valid values", "[server][config]") {
  CHECK(brain_error({{"field_step", "fastt"}}) ==
        "config key 'brain.field_step' is \"fastt\"; valid values: \"reference\", \"fast\", "
        "\"script\", or the path of a TorchScript .pt file (did you mean \"fast\"?)");
  CHECK(brain_error({{"field_step", "models/field_step.pt"}}).empty());  // a path: loaded later
  CHECK(brain_error({{"device", "cdua"}}) ==
        "config key 'brain.device' is \"cdua\"; valid values: \"cpu\", \"cuda\", or \"cuda:N\" "
        "(did you mean \"cuda\"?)");
}

TEST_CASE("an unknown brain key gets the closest known key", "[server][config]") {
  CHECK(brain_error({{"resolutoin", 16}}) ==
        "unknown config key 'brain.resolutoin' (did you mean 'resolution'?)");
}

TEST_CASE("docs/config.schema.json lists every brain key, and only those", "[server][config]") {
  const json schema = fieldbrain::config::parse_json_file(std::string(FIELDBRAIN_SOURCE_DIR) +
                                                          "/docs/config.schema.json");
  const json brain = schema["properties"]["brain"]["properties"];
  const json defaults = BrainConfig{};
  std::set<std::string> in_schema, in_config;
  for (auto it = brain.begin(); it != brain.end(); ++it) in_schema.insert(it.key());
  for (auto it = defaults.begin(); it != defaults.end(); ++it) in_config.insert(it.key());
  CHECK(in_schema == in_config);
}

TEST_CASE("fieldbrain-server names the config file of a bad brain key", "[server][config]") {
  const auto dir = fieldbrain::server::testing::fresh_dir("fieldbrain-brain-key-file");
  const std::string path = (dir / "bad_brain.json").string();
  std::ofstream(path) << R"({"brain": {"resolution": 16.5}})";
  const auto r =
      fieldbrain::server::testing::run_command(std::string(FIELDBRAIN_SERVER_EXE) + " --config " +
                                               path + " --port 0 --monitor-port -1 --state-dir ''");
  const std::string& output = r.output;
  INFO(output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(output, Catch::Contains("refusing to start: " + path +
                                     ": config key 'brain.resolution' must be a whole number, "
                                     "not 16.5"));
}
