// What a person sees when a config is wrong (issue 25 item 3): the file, line and column of
// broken JSON; the key, the wanted and the given type in words; no silent truncation of 16.5;
// the valid values of a choice and "did you mean" for typos. And docs/config.schema.json, the
// schema for editors: every shipped config satisfies it and it lists every key the server reads.
#include <algorithm>
#include "test/support/catch.h"
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "app/server/config/server_config.h"
#include "brain/config_reader.h"
#include "test/server/fresh_dir.h"

using namespace fieldbrain::server;
using nlohmann::json;

namespace {

std::string error_of(const char* text) {
  try {
    json::parse(text).get<ServerConfig>().validate();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string load_error(const std::string& text) {
  const auto dir = fieldbrain::server::testing::fresh_dir("fieldbrain-config-errors");
  const std::string path = (dir / "broken.json").string();
  std::ofstream(path) << text;
  try {
    load_server_config(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// The part of JSON Schema (draft-07) docs/config.schema.json uses; anything else fails the
// test so the schema cannot grow a keyword this check ignores.
void validate(const json& value, const json& schema, const std::string& where,
              std::vector<std::string>& errors) {
  static const std::set<std::string> understood = {
      "$schema",   "$id",       "title",      "description",
      "default",   "type",      "properties", "additionalProperties",
      "enum",      "minimum",   "maximum",    "exclusiveMinimum",
      "minLength", "maxLength", "pattern",    "anyOf"};
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    if (!understood.count(it.key())) errors.push_back(where + ": unchecked keyword " + it.key());
  }
  auto fail = [&](const std::string& what) { errors.push_back(where + ": " + what); };
  if (schema.contains("type")) {
    const std::string type = schema["type"];
    const bool ok = (type == "object" && value.is_object()) ||
                    (type == "integer" && value.is_number_integer()) ||
                    (type == "number" && value.is_number()) ||
                    (type == "string" && value.is_string()) ||
                    (type == "boolean" && value.is_boolean());
    if (!ok) return fail("is not " + type);
  }
  if (schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
    fail("not in enum");
  }
  if (value.is_number()) {
    const double v = value.get<double>();
    if (schema.contains("minimum") && v < schema["minimum"].get<double>()) fail("below minimum");
    if (schema.contains("maximum") && v > schema["maximum"].get<double>()) fail("above maximum");
    if (schema.contains("exclusiveMinimum") && v <= schema["exclusiveMinimum"].get<double>()) {
      fail("not above exclusiveMinimum");
    }
  }
  if (value.is_string()) {
    const std::string s = value;
    if (schema.contains("minLength") && s.size() < schema["minLength"].get<size_t>()) fail("short");
    if (schema.contains("maxLength") && s.size() > schema["maxLength"].get<size_t>()) fail("long");
    if (schema.contains("pattern") &&
        !std::regex_search(s, std::regex(schema["pattern"].get<std::string>()))) {
      fail("does not match " + schema["pattern"].get<std::string>());
    }
  }
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const auto& option : schema["anyOf"]) {
      std::vector<std::string> sub;
      validate(value, option, where, sub);
      any = any || sub.empty();
    }
    if (!any) fail("matches none of anyOf");
  }
  if (value.is_object()) {
    const json properties = schema.value("properties", json::object());
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (properties.contains(it.key())) {
        validate(it.value(), properties[it.key()], where + "." + it.key(), errors);
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) {
          fail("unknown key " + it.key());
        } else if (extra.is_object()) {
          validate(it.value(), extra, where + "." + it.key(), errors);
        }
      }
    }
  }
}

json schema() {
  return fieldbrain::config::parse_json_file(std::string(FIELDBRAIN_SOURCE_DIR) +
                                             "/docs/config.schema.json");
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

}  // namespace

TEST_CASE("a config file that is not JSON is refused naming the file, line and column",
          "[server][config]") {
  const std::string msg = load_error("{\n  \"port\": 9999,\n  \"host\": \"0.0.0.0\",\n}\n");
  INFO(msg);
  CHECK_THAT(msg, Catch::Contains("broken.json is not valid JSON"));
  CHECK_THAT(msg, Catch::Contains("line 4, column 1"));
  CHECK_THAT(msg, Catch::Contains("syntax error"));
  // The column is the last character of the token the parser could not take.
  CHECK_THAT(load_error("{\"port\": 99 99}"), Catch::Contains("line 1, column 14"));
}

TEST_CASE("a key of the wrong type is named with the type it wants and the value it got",
          "[server][config]") {
  CHECK(error_of(R"({"port": "high"})") ==
        "config key 'port' must be a whole number, not \"high\" (a string)");
  CHECK(error_of(R"({"host": 127})") ==
        "config key 'host' must be a string, not 127 (a whole number)");
  CHECK(error_of(R"({"legacy_push": "yes"})") ==
        "config key 'legacy_push' must be true or false, not \"yes\" (a string)");
  CHECK(error_of(R"({"idle_timeout_s": [1]})") ==
        "config key 'idle_timeout_s' must be a number, not an array");
  CHECK(error_of(R"({"robots": {"tokens": {"alice": 5}}})") ==
        "config key 'robots.tokens.alice' must be a string, not 5 (a whole number)");
  CHECK(error_of(R"({"brain": 3})") ==
        "config key 'brain' must be an object, not 3 (a whole number)");
  CHECK(error_of(R"({"max_json_line": -1})") ==
        "config key 'max_json_line' must be a whole number >= 0, not -1 (a whole number)");
}

TEST_CASE("a whole-number key refuses 16.5 instead of truncating it to 16", "[server][config]") {
  CHECK(error_of(R"({"max_bad_frames": 16.5})") ==
        "config key 'max_bad_frames' must be a whole number, not 16.5 (a number with a fraction)");
  CHECK(json::parse(R"({"max_bad_frames": 16.0})").get<ServerConfig>().max_bad_frames == 16);
  CHECK_THAT(error_of(R"({"port": 1e12})"),
             Catch::Contains("'port' = 1000000000000.0 is out of range"));
}

TEST_CASE("an unknown key is refused with the closest known key", "[server][config]") {
  CHECK(error_of(R"({"prot": 9999})") == "unknown config key 'prot' (did you mean 'port'?)");
  CHECK(error_of(R"({"robots": {"max_live_brain": 3}})") ==
        "unknown config key 'robots.max_live_brain' (did you mean 'max_live_brains'?)");
  // Nothing close: the known keys are listed instead.
  CHECK_THAT(error_of(R"({"zzzzzzzz": 1})"),
             Catch::StartsWith("unknown config key 'zzzzzzzz'; known keys: \"brain\", "));
}

TEST_CASE("a value outside a fixed set lists the valid values and the closest one",
          "[server][config]") {
  CHECK(error_of(R"({"log_level": "warning"})") ==
        "config key 'log_level' is \"warning\"; valid values: \"trace\", \"debug\", \"info\", "
        "\"warn\", \"error\", \"critical\", \"off\" (did you mean \"warn\"?)");
  CHECK(error_of(R"({"robots": {"binary_key": "adress"}})") ==
        "config key 'robots.binary_key' is \"adress\"; valid values: \"profile\", \"address\" "
        "(did you mean \"address\"?)");
}

TEST_CASE("a new enum key gets valid values and did-you-mean from config_reader.h alone",
          "[server][config]") {
  enum class Mode { slow, fast };
  static constexpr fieldbrain::config::Choice<Mode> kModes[] = {{"slow", Mode::slow},
                                                                {"fast", Mode::fast}};
  Mode m = Mode::slow;
  fieldbrain::config::read_choice(json{{"mode", "fast"}}, "x.", "mode", m, kModes);
  CHECK(m == Mode::fast);
  CHECK(std::string(fieldbrain::config::choice_name(m, kModes)) == "fast");
  CHECK_THROWS_WITH(
      fieldbrain::config::read_choice(json{{"mode", "fsat"}}, "x.", "mode", m, kModes),
      "config key 'x.mode' is \"fsat\"; valid values: \"slow\", \"fast\" (did you "
      "mean \"fast\"?)");
  CHECK_THROWS_WITH(fieldbrain::config::read_choice(json{{"mode", 1}}, "x.", "mode", m, kModes),
                    "config key 'x.mode' must be a string, not 1 (a whole number)");
}

TEST_CASE("every shipped config satisfies docs/config.schema.json", "[server][config]") {
  const json s = schema();
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(FIELDBRAIN_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    // The simulator's map lives beside the server configs but is not one (app/sim/arena.h).
    if (entry.path().filename() == "arena_default.json") continue;
    INFO(entry.path().string());
    std::vector<std::string> errors;
    validate(fieldbrain::config::parse_json_file(entry.path().string()), s, "config", errors);
    for (const auto& e : errors) FAIL_CHECK(e);
    ++checked;
  }
  CHECK(checked >= 2);
  // The schema refuses what the server refuses.
  std::vector<std::string> errors;
  validate(json::parse(R"({"prot": 1, "brain": {"resolution": 16.5, "field_step": "fastt"}})"), s,
           "config", errors);
  CHECK(errors.size() == 3);
}

TEST_CASE("docs/config.schema.json lists every server and robots key, and only those",
          "[server][config]") {
  const json s = schema();
  const json defaults = ServerConfig{};
  CHECK(keys_of(s["properties"]) == keys_of(defaults));
  CHECK(keys_of(s["properties"]["robots"]["properties"]) == keys_of(defaults["robots"]));
  CHECK(keys_of(s["properties"]["cluster"]["properties"]) == keys_of(defaults["cluster"]));
  for (auto it = defaults["cluster"].begin(); it != defaults["cluster"].end(); ++it) {
    INFO("cluster." << it.key());
    CHECK(s["properties"]["cluster"]["properties"][it.key()]["default"] == it.value());
  }
  // Each default in the schema is the server's default.
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    if (it.key() == "robots" || it.key() == "cluster" || it.key() == "brain" ||
        it.key() == "monitor_token") {
      continue;
    }
    INFO(it.key());
    CHECK(s["properties"][it.key()]["default"] == it.value());
  }
}
