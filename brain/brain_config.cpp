#include "brain/brain_config.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "brain/config_reader.h"

namespace fieldbrain {
namespace {

void check_range(const char* name, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    throw std::invalid_argument(fmt::format("config key 'brain.{}' = {} is out of range [{}, {}]",
                                            name, value, lo, hi));
  }
}

// The names field_step takes besides a path (docs/configuration.md).
const std::vector<std::string>& field_step_names() {
  static const std::vector<std::string> names = {"reference", "fast", "script"};
  return names;
}

// A field_step that is none of the names must look like a path, so a typo ("fastt") is
// refused with the valid names instead of failing later as a file that cannot be loaded.
bool names_a_file(const std::string& field_step) {
  return field_step.find('/') != std::string::npos ||
         (field_step.size() > 3 && field_step.compare(field_step.size() - 3, 3, ".pt") == 0);
}

// The config's names of each enum's values (config::read_choice lists them in errors).
constexpr config::Choice<BrainProfile> kProfiles[] = {{"fieldbrain", BrainProfile::Fieldbrain},
                                                      {"legacy", BrainProfile::Legacy}};

}  // namespace

const char* to_string(BrainProfile p) { return config::choice_name(p, kProfiles); }

FieldStepImpl parse_field_step(const std::string& field_step) {
  if (field_step == "reference") return FieldStepImpl::Aten;
  if (field_step == "fast") return FieldStepImpl::Fused;
  if (field_step == "script") return FieldStepImpl::Script;
  if (names_a_file(field_step)) return FieldStepImpl::ScriptFile;
  config::not_a_choice("brain.field_step", field_step, field_step_names(),
                       ", or the path of a TorchScript .pt file");
}

BrainCycle BrainConfig::cycle() const {
  if (profile == BrainProfile::Legacy) return BrainCycle::Legacy;
  return field_step_impl() == FieldStepImpl::Fused ? BrainCycle::Fused : BrainCycle::Reference;
}

FieldStepImpl BrainConfig::field_step_impl() const { return parse_field_step(field_step); }

void BrainConfig::validate() const {
  check_range("sensory_dim", sensory_dim, 1, 1024);
  check_range("motor_dim", motor_dim, 1, 1024);
  check_range("resolution", resolution, 8, 128);
  check_range("attractor_capacity", attractor_capacity, 1, 256);
  check_range("telemetry_every", telemetry_every, 1, int64_t{1} << 40);
  check_range("legacy_threads", legacy_threads, 0, 1024);
  parse_field_step(field_step);  // throws naming the valid values
  if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0) {
    config::not_a_choice("brain.device", device, {"cpu", "cuda"}, ", or \"cuda:N\"");
  }
  if (profile == BrainProfile::Legacy && device != "cpu") {
    throw std::invalid_argument(fmt::format(
        "config key 'brain.device' is \"{}\": not available with \"profile\": \"legacy\" (the "
        "original's numbers are reproduced on the CPU only; set \"device\": \"cpu\")",
        device));
  }
  if (profile == BrainProfile::Legacy) legacy::refuse_cpu_without_legacy_stencils("brain.");
  if (profile != BrainProfile::Legacy) legacy::refuse_legacy_keys(legacy, "brain.");
  if (profile != BrainProfile::Legacy && legacy_threads != BrainConfig{}.legacy_threads) {
    throw std::invalid_argument(fmt::format(
        "config key 'brain.legacy_threads' is {}: it applies only to \"profile\": \"legacy\"",
        legacy_threads));
  }
}

void to_json(nlohmann::json& j, const BrainConfig& c) {
  j = nlohmann::json{{"profile", to_string(c.profile)},
                     {"sensory_dim", c.sensory_dim},
                     {"motor_dim", c.motor_dim},
                     {"resolution", c.resolution},
                     {"attractor_capacity", c.attractor_capacity},
                     {"seed", c.seed},
                     {"telemetry_every", c.telemetry_every},
                     {"field_step", c.field_step},
                     {"device", c.device},
                     {"legacy_threads", c.legacy_threads}};
  legacy::write_legacy_keys(j, c.legacy);
}

void from_json(const nlohmann::json& j, BrainConfig& c) {
  if (!j.is_object()) {
    throw std::invalid_argument("config key 'brain' must be an object, not " +
                                config::describe_value(j));
  }
  std::vector<std::string> known = {"sensory_dim",        "motor_dim", "resolution",
                                    "attractor_capacity", "seed",      "telemetry_every",
                                    "field_step",         "device",    "profile"};
  known.insert(known.end(), std::begin(legacy::kLegacyConfigKeys),
               std::end(legacy::kLegacyConfigKeys));
  known.push_back("legacy_threads");
  config::check_known_keys(j, "brain.", known);
  BrainConfig out;
  config::read_key(j, "brain.", "sensory_dim", out.sensory_dim);
  config::read_key(j, "brain.", "motor_dim", out.motor_dim);
  config::read_key(j, "brain.", "resolution", out.resolution);
  config::read_key(j, "brain.", "attractor_capacity", out.attractor_capacity);
  config::read_key(j, "brain.", "seed", out.seed);
  config::read_key(j, "brain.", "telemetry_every", out.telemetry_every);
  config::read_key(j, "brain.", "field_step", out.field_step);
  config::read_key(j, "brain.", "device", out.device);
  config::read_key(j, "brain.", "legacy_threads", out.legacy_threads);
  config::read_choice(j, "brain.", "profile", out.profile, kProfiles);
  legacy::read_legacy_keys(j, "brain.", out.legacy);
  out.validate();
  c = out;
}

}  // namespace fieldbrain
