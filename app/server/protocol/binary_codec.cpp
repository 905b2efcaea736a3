#include "app/server/protocol/binary_codec.h"

#include <algorithm>

namespace fieldbrain::server {

BinaryCodec::BinaryCodec(Framing framing, CodecLimits limits)
    : framing_(framing), limits_(limits) {}

WireMessage BinaryCodec::decode() {
  if (!have_header_) {
    const size_t hs = header_size(framing_);
    if (buffered() < hs) return NeedMore{};
    switch (parse_header(framing_, data(), limits_.max_frame_floats, &header_)) {
      case HeaderProblem::None:
        break;
      case HeaderProblem::BadMagic:
        // Out of sync; the HEAD client reconnects after a close.
        return WireFatal{kCodeInvalidMessage, "bad magic in frame header", ""};
      case HeaderProblem::TooLarge: {
        std::string reply;
        append_frame(reply, framing_, MessageType::Error, &kErrorTooLarge, 1);
        return WireFatal{kCodeMessageTooLarge,
                         "frame of " + std::to_string(header_.count) + " floats (length " +
                             std::to_string(header_.length) + ") exceeds the limit of " +
                             std::to_string(limits_.max_frame_floats),
                         reply};
      }
      case HeaderProblem::LengthMismatch: {
        std::string reply;
        append_frame(reply, framing_, MessageType::Error, &kErrorProtocol, 1);
        return WireFatal{kCodeInvalidMessage,
                         "length " + std::to_string(header_.length) + " does not match count " +
                             std::to_string(header_.count),
                         reply};
      }
    }
    consume(hs);
    have_header_ = true;
  }
  const size_t body = 4 * size_t{header_.count};
  if (buffered() < body) return NeedMore{};
  std::vector<float> values = decode_floats(data(), header_.count);
  consume(body);
  have_header_ = false;
  switch (header_.type) {
    case static_cast<uint8_t>(MessageType::Handshake): {
      HandshakeLimits hl;
      hl.max_dim = std::min<int>(limits_.max_dim, static_cast<int>(limits_.max_frame_floats) - 1);
      HandshakeParse parsed = parse_capabilities(values, hl);
      if (auto* why = std::get_if<std::string>(&parsed)) {
        return WireRejected{WireRejected::Kind::Handshake, kCodeInvalidCapabilities, *why};
      }
      WireHandshake hs;
      hs.caps = std::get<Capabilities>(parsed);
      hs.identity = profile_key(hs.caps);
      hs.sensory_dim = hs.caps.sensory_dim;
      hs.motor_dim = hs.caps.motor_dim;
      return hs;
    }
    case static_cast<uint8_t>(MessageType::SensoryInput): {
      WireSensors s;
      s.values = std::move(values);
      // Legacy convention: S+1 values carry a reward in the last one.
      if (sensory_dim_ > 0 && s.values.size() == static_cast<size_t>(sensory_dim_) + 1) {
        s.reward = s.values.back();
        s.values.pop_back();
      }
      return s;
    }
    default:
      return WireUnknown{"message type " + std::to_string(header_.type)};
  }
}

void BinaryCodec::encode_accepted(const HandshakeAccepted& a, std::string& out) const {
  const std::vector<float> v = handshake_reply(framing_, a.caps, a.gpu, a.server_caps);
  append_frame(out, framing_, MessageType::Handshake, v.data(), v.size());
}

void BinaryCodec::encode_motors(const std::vector<float>& motors, int64_t, std::string& out) const {
  append_frame(out, framing_, MessageType::ActionOutput, motors.data(), motors.size());
}

void BinaryCodec::encode_refused(int code, const std::string&, std::string& out) const {
  const std::vector<float> v = handshake_error_reply(code);
  append_frame(out, framing_, MessageType::Handshake, v.data(), v.size());
}

// A safe stop: HEAD clients read any frame as motors, so never an ERROR frame here.
void BinaryCodec::encode_rejected(int, const std::string&, int motor_dim, std::string& out) const {
  const std::vector<float> zeros(static_cast<size_t>(std::max(0, motor_dim)), 0.0f);
  append_frame(out, framing_, MessageType::ActionOutput, zeros.data(), zeros.size());
}

void BinaryCodec::encode_unknown(const std::string&, std::string& out) const {
  append_frame(out, framing_, MessageType::Error, &kErrorUnknownType, 1);
}

}  // namespace fieldbrain::server
