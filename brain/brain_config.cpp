#include "brain/brain_config.h"

#include <stdexcept>

#include <fmt/format.h>

namespace fieldbrain {
namespace {

void check_range(const char* name, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    throw std::invalid_argument(
        fmt::format("brain config: {} = {} is out of range [{}, {}]", name, value, lo, hi));
  }
}

// Reads j[key] into out, naming the key when the JSON type does not fit.
template <typename T>
void read_key(const nlohmann::json& j, const char* key, T& out) {
  try {
    out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("brain config: key \"{}\": {}", key, e.what()));
  }
}

}  // namespace

void BrainConfig::validate() const {
  check_range("sensory_dim", sensory_dim, 1, 1024);
  check_range("motor_dim", motor_dim, 1, 1024);
  check_range("resolution", resolution, 8, 128);
  check_range("attractor_capacity", attractor_capacity, 1, 256);
  check_range("telemetry_every", telemetry_every, 1, int64_t{1} << 40);
  if (field_step.empty()) {
    throw std::invalid_argument("brain config: field_step is empty");
  }
  if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0) {
    throw std::invalid_argument(
        fmt::format("brain config: device = \"{}\" (expected \"cpu\" or \"cuda\")", device));
  }
}

void to_json(nlohmann::json& j, const BrainConfig& c) {
  j = nlohmann::json{{"sensory_dim", c.sensory_dim},
                     {"motor_dim", c.motor_dim},
                     {"resolution", c.resolution},
                     {"attractor_capacity", c.attractor_capacity},
                     {"seed", c.seed},
                     {"telemetry_every", c.telemetry_every},
                     {"field_step", c.field_step},
                     {"device", c.device}};
}

void from_json(const nlohmann::json& j, BrainConfig& c) {
  if (!j.is_object()) {
    throw std::invalid_argument("brain config: expected a JSON object");
  }
  BrainConfig out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "sensory_dim") read_key(j, "sensory_dim", out.sensory_dim);
    else if (key == "motor_dim") read_key(j, "motor_dim", out.motor_dim);
    else if (key == "resolution") read_key(j, "resolution", out.resolution);
    else if (key == "attractor_capacity") read_key(j, "attractor_capacity", out.attractor_capacity);
    else if (key == "seed") read_key(j, "seed", out.seed);
    else if (key == "telemetry_every") read_key(j, "telemetry_every", out.telemetry_every);
    else if (key == "field_step") read_key(j, "field_step", out.field_step);
    else if (key == "device") read_key(j, "device", out.device);
    else throw std::invalid_argument(fmt::format("brain config: unknown key \"{}\"", key));
  }
  out.validate();
  c = out;
}

}  // namespace fieldbrain
