#include "app/server/protocol/json_codec.h"

#include <cstring>

#include "app/server/protocol/json_lines.h"

namespace fieldbrain::server {

WireMessage JsonCodec::decode() {
  const size_t have = buffered();
  const void* nl =
      have > scanned_ ? std::memchr(data() + scanned_, '\n', have - scanned_) : nullptr;
  if (nl == nullptr) {
    scanned_ = have;
    if (have >= limits_.max_line) {
      return WireFatal{kCodeMessageTooLarge,
                       "JSON line longer than " + std::to_string(limits_.max_line) + " bytes",
                       json_error_reply(kCodeMessageTooLarge, "line too long")};
    }
    return NeedMore{};
  }
  const size_t end = static_cast<size_t>(static_cast<const uint8_t*>(nl) - data());
  std::string line(reinterpret_cast<const char*>(data()), end);
  consume(end + 1);
  scanned_ = 0;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) {
    return WireRejected{WireRejected::Kind::Silent, kCodeInvalidMessage, "blank line"};
  }
  JsonMessage msg =
      parse_json_line(line, limits_.max_dim, limits_.default_sensory, limits_.default_motor);
  if (auto* bad = std::get_if<JsonBad>(&msg)) {
    if (bad->unknown_type) return WireUnknown{bad->message};
    return WireRejected{bad->code == kCodeInvalidCapabilities ? WireRejected::Kind::Handshake
                                                              : WireRejected::Kind::Frame,
                        bad->code, bad->message};
  }
  if (auto* hs = std::get_if<JsonHandshake>(&msg)) {
    if (hs->sensory_dim + 1 > static_cast<int>(limits_.max_frame_floats)) {
      return WireRejected{WireRejected::Kind::Handshake, kCodeInvalidCapabilities,
                          "sensory_dim above max_frame_floats"};
    }
    WireHandshake w;
    w.identity_from_client = !hs->robot_id.empty();
    w.json_namespace = true;
    w.identity = w.identity_from_client ? hs->robot_id
                                        : "json_" + std::to_string(hs->sensory_dim) + "s_" +
                                              std::to_string(hs->motor_dim) + "m";
    w.token = hs->token;
    w.sensory_dim = w.caps.sensory_dim = hs->sensory_dim;
    w.motor_dim = w.caps.motor_dim = hs->motor_dim;
    return w;
  }
  auto& sensors = std::get<JsonSensors>(msg);
  if (!sensors.values_ok) {
    return WireRejected{WireRejected::Kind::Frame, kCodeInvalidMessage, "'values' must be numbers"};
  }
  return WireSensors{std::move(sensors.values), sensors.reward};
}

void JsonCodec::encode_accepted(const HandshakeAccepted& a, std::string& out) const {
  out += json_handshake_reply(a.key, a.sensory_dim, a.motor_dim, a.cycle, a.token);
}

void JsonCodec::encode_motors(const std::vector<float>& motors, int64_t cycle,
                              std::string& out) const {
  out += json_motors_reply(motors, cycle);
}

void JsonCodec::encode_refused(int code, const std::string& why, std::string& out) const {
  out += json_error_reply(code, why);
}

void JsonCodec::encode_rejected(int code, const std::string& why, int, std::string& out) const {
  out += json_error_reply(code, why);
}

void JsonCodec::encode_unknown(const std::string& what, std::string& out) const {
  out += json_error_reply(kCodeUnknownType, "unknown " + what);
}

}  // namespace fieldbrain::server
