#include "app/server/protocol/handshake.h"

#include <cmath>

namespace fieldbrain::server {
namespace {

constexpr const char* kCategories[] = {"CONNECTION",  "HANDSHAKE", "SESSION", "BRAIN",
                                       "PERSISTENCE", "RESOURCE",  "PROTOCOL"};

// Python's int(x) on a float: truncation toward zero, refusing NaN/Inf. Values far outside
// any sane size are reported as out of range rather than overflowing an int.
bool to_int(float x, long long* out) {
  if (!std::isfinite(x)) return false;
  const double t = std::trunc(static_cast<double>(x));
  if (t > 1e15 || t < -1e15) {
    *out = t > 0 ? 1000000000000000LL : -1000000000000000LL;
  } else {
    *out = static_cast<long long>(t);
  }
  return true;
}

}  // namespace

int error_category(int code) {
  const int digit = code / 1000;
  return digit >= 1 && digit <= 7 ? digit - 1 : 6;
}

const char* error_category_name(int code) { return kCategories[error_category(code)]; }

const char* error_code_name(int code) {
  switch (code) {
    case 1002:
      return "CONNECTION_TIMEOUT";
    case 2001:
      return "INVALID_CAPABILITIES";
    case 2003:
      return "HANDSHAKE_TIMEOUT";
    case 2004:
      return "DUPLICATE_SESSION";
    case 2005:
      return "IDENTITY_REFUSED";
    case 3001:
      return "SESSION_NOT_FOUND";
    case 3003:
      return "SESSION_LIMIT_REACHED";
    case 4004:
      return "FIELD_DIMENSION_ERROR";
    case 4002:
      return "BRAIN_PROCESSING_ERROR";
    case 4005:
      return "BRAIN_STATE_NOT_FINITE";
    case 5001:
      return "PERSISTENCE_SAVE_FAILED";
    case 5002:
      return "PERSISTENCE_LOAD_FAILED";
    case 7001:
      return "INVALID_MESSAGE_FORMAT";
    case 7002:
      return "MESSAGE_TOO_LARGE";
    default:
      return "UNKNOWN_ERROR";
  }
}

HandshakeParse parse_capabilities(const std::vector<float>& values, const HandshakeLimits& limits) {
  Capabilities caps;
  auto at = [&](size_t i, float fallback) { return i < values.size() ? values[i] : fallback; };
  caps.version = at(0, 1.0f);
  long long s = 0, m = 0, mask = 0;
  if (!to_int(at(1, 16.0f), &s)) return std::string("sensory size is not a finite number");
  if (!to_int(at(2, 4.0f), &m)) return std::string("motor size is not a finite number");
  if (!to_int(at(4, 0.0f), &mask)) return std::string("capability mask is not a finite number");
  if (s < 1 || s > limits.max_dim) {
    return "sensory size " + std::to_string(s) + " outside 1.." + std::to_string(limits.max_dim);
  }
  if (m < 1 || m > limits.max_dim) {
    return "motor size " + std::to_string(m) + " outside 1.." + std::to_string(limits.max_dim);
  }
  caps.sensory_dim = static_cast<int>(s);
  caps.motor_dim = static_cast<int>(m);
  caps.hardware_type = at(3, 0.0f);
  caps.capability_mask = static_cast<int>(mask & 0xffff);
  long long w = 320, h = 240;
  // Vision size is informational (the UDP streams are not served); bad values fall back.
  if (!to_int(at(5, 320.0f), &w) || w < 0 || w > 100000) w = 320;
  if (!to_int(at(6, 240.0f), &h) || h < 0 || h > 100000) h = 240;
  caps.vision_width = static_cast<int>(w);
  caps.vision_height = static_cast<int>(h);
  return caps;
}

std::string hardware_name(float hardware_type) {
  if (hardware_type == 1.0f) return "picarx";
  if (hardware_type == 2.0f) return "generic";
  return "unknown";
}

std::string profile_key(const Capabilities& caps) {
  return hardware_name(caps.hardware_type) + "_" + std::to_string(caps.sensory_dim) + "s_" +
         std::to_string(caps.motor_dim) + "m";
}

std::vector<float> handshake_reply(Framing framing, const Capabilities& caps, bool gpu,
                                   float server_caps) {
  const float s = static_cast<float>(caps.sensory_dim);
  const float m = static_cast<float>(caps.motor_dim);
  if (framing == Framing::A) return {1.0f, m, s, m, 1.0f};
  return {1.0f, s, m, gpu ? 1.0f : 0.0f, server_caps};
}

std::vector<float> handshake_error_reply(int code) {
  return {-1.0f, static_cast<float>(code), static_cast<float>(error_category(code)), 0.0f, 0.0f};
}

}  // namespace fieldbrain::server
