#include "app/server/protocol/json_lines.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "app/server/protocol/handshake.h"
#include "app/server/protocol/printable.h"

namespace fieldbrain::server {
namespace {

// A size field: an integer-valued number in 1..max_dim; absent keeps *out.
bool read_dim(const nlohmann::json& obj, const char* key, int max_dim, int* out, std::string* why) {
  auto it = obj.find(key);
  if (it == obj.end()) return true;
  if (!it->is_number()) {
    *why = std::string("'") + key + "' must be a number";
    return false;
  }
  const double v = it->get<double>();
  if (!(v >= 1 && v <= max_dim) || v != static_cast<double>(static_cast<long long>(v))) {
    *why = std::string("'") + key + "' must be an integer in 1.." + std::to_string(max_dim);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

// double -> float without undefined behaviour: out-of-range magnitudes become Inf, which the
// session then refuses like any non-finite sensor value.
float to_float(const nlohmann::json& v) {
  const double d = v.get<double>();
  if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
    return d > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
  }
  return static_cast<float>(d);
}

}  // namespace

JsonMessage parse_json_line(const std::string& line, int max_dim, int default_sensory,
                            int default_motor) {
  nlohmann::json obj = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) return JsonBad{kCodeInvalidMessage, "malformed JSON"};
  if (!obj.is_object()) return JsonBad{kCodeInvalidMessage, "a message must be a JSON object"};
  auto type_it = obj.find("type");
  if (type_it == obj.end() || !type_it->is_string()) {
    return JsonBad{kCodeInvalidMessage, "missing string field 'type'"};
  }
  const std::string type = type_it->get<std::string>();
  if (type == "handshake") {
    JsonHandshake hs;
    hs.sensory_dim = default_sensory;
    hs.motor_dim = default_motor;
    std::string why;
    if (!read_dim(obj, "sensory_dim", max_dim, &hs.sensory_dim, &why) ||
        !read_dim(obj, "motor_dim", max_dim, &hs.motor_dim, &why)) {
      return JsonBad{kCodeInvalidCapabilities, why};
    }
    auto id = obj.find("robot_id");
    if (id != obj.end()) {
      if (!id->is_string() || id->get<std::string>().empty() ||
          id->get<std::string>().size() > 128) {
        return JsonBad{kCodeInvalidCapabilities, "'robot_id' must be a string of 1..128 chars"};
      }
      // An id names files and appears in every log line about the robot: no control
      // characters, so a newline in an id can never start a forged log line anywhere.
      const std::string& s = id->get_ref<const std::string&>();
      if (std::any_of(s.begin(), s.end(), [](char ch) {
            return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
          })) {
        return JsonBad{kCodeInvalidCapabilities, "'robot_id' must not contain control characters"};
      }
      hs.robot_id = id->get<std::string>();
    }
    auto token = obj.find("token");
    if (token != obj.end() && !token->is_null()) {
      if (!token->is_string() || token->get<std::string>().size() > 256) {
        return JsonBad{kCodeInvalidCapabilities, "'token' must be a string of at most 256 chars"};
      }
      hs.token = token->get<std::string>();
    }
    return hs;
  }
  if (type == "sensors") {
    JsonSensors s;
    auto values = obj.find("values");
    if (values == obj.end() || !values->is_array()) {
      return JsonBad{kCodeInvalidMessage, "'values' must be an array of numbers"};
    }
    s.values.reserve(values->size());
    for (const auto& v : *values) {
      if (!v.is_number()) {
        s.values_ok = false;
        break;
      }
      s.values.push_back(to_float(v));
    }
    auto reward = obj.find("reward");
    if (reward != obj.end() && !reward->is_null()) {
      if (!reward->is_number()) return JsonBad{kCodeInvalidMessage, "'reward' must be a number"};
      s.reward = to_float(*reward);
    }
    return s;
  }
  return JsonBad{kCodeUnknownType, "message type '" + printable(type) + "'", true};
}

std::string json_handshake_reply(const std::string& robot_key, int sensory_dim, int motor_dim,
                                 long long cycle, const std::string& token) {
  nlohmann::json j = {{"type", "handshake"},    {"accepted", true},
                      {"robot_id", robot_key},  {"sensory_dim", sensory_dim},
                      {"motor_dim", motor_dim}, {"cycle", cycle}};
  if (!token.empty()) j["token"] = token;
  // The key may hold invalid UTF-8 from the client: replace, never throw.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string json_motors_reply(const std::vector<float>& motors, long long cycle) {
  nlohmann::json j = {{"type", "motors"}, {"values", motors}, {"cycle", cycle}};
  return j.dump() + "\n";
}

std::string json_error_reply(int code, const std::string& message) {
  // error_handler::replace: a message quoting invalid UTF-8 from the client must not throw.
  nlohmann::json j = {{"type", "error"}, {"code", code}, {"message", message}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fieldbrain::server
