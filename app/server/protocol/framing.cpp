#include "app/server/protocol/framing.h"

#include <cstring>

namespace fieldbrain::server {
namespace {

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void append_be32(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v >> 24));
  out.push_back(static_cast<uint8_t>(v >> 16));
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

// The payload is little-endian whatever the host; spelled out byte by byte so a big-endian
// build would still speak the wire format.
void append_le_f32(std::vector<uint8_t>& out, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  out.push_back(static_cast<uint8_t>(bits));
  out.push_back(static_cast<uint8_t>(bits >> 8));
  out.push_back(static_cast<uint8_t>(bits >> 16));
  out.push_back(static_cast<uint8_t>(bits >> 24));
}

}  // namespace

const char* framing_name(Framing framing) {
  switch (framing) {
    case Framing::A:
      return "A";
    case Framing::B:
      return "B/ROBO";
    case Framing::C:
      return "C/DEADBEEF";
    case Framing::JsonLines:
      return "json";
  }
  return "?";
}

const char* header_problem_name(HeaderProblem problem) {
  switch (problem) {
    case HeaderProblem::None:
      return "none";
    case HeaderProblem::BadMagic:
      return "bad magic";
    case HeaderProblem::LengthMismatch:
      return "length/count mismatch";
    case HeaderProblem::TooLarge:
      return "frame too large";
  }
  return "?";
}

std::optional<Framing> detect_framing(const uint8_t* first, size_t n) {
  if (n >= 1 && first[0] == '{') return Framing::JsonLines;
  if (n < 4) return std::nullopt;
  const uint32_t word = read_be32(first);
  if (word == kMagicRobo) return Framing::B;
  if (word == kMagicDeadBeef) return Framing::C;
  return Framing::A;
}

std::optional<Opening> classify_opening(const uint8_t* first, size_t n) {
  if (n >= 1 && first[0] == '{') return Opening::JsonLines;
  // TLS record: content type 22 (handshake), then major version 3.
  if (n >= 1 && first[0] == 0x16 && (n < 2 || first[1] == 0x03)) {
    if (n < 2) return std::nullopt;
    return Opening::Tls;
  }
  if (n < 4) return std::nullopt;
  static const char* methods[] = {"GET ", "POST", "PUT ", "HEAD", "DELE",
                                  "OPTI", "PATC", "CONN", "TRAC", "PRI "};
  for (const char* m : methods) {
    if (std::memcmp(first, m, 4) == 0) return Opening::Http;
  }
  switch (*detect_framing(first, n)) {
    case Framing::B:
      return Opening::B;
    case Framing::C:
      return Opening::C;
    default:
      return Opening::A;
  }
}

const char* opening_name(Opening opening) {
  switch (opening) {
    case Opening::Http:
      return "HTTP";
    case Opening::Tls:
      return "TLS";
    case Opening::B:
      return framing_name(Framing::B);
    case Opening::C:
      return framing_name(Framing::C);
    case Opening::JsonLines:
      return framing_name(Framing::JsonLines);
    case Opening::A:
      break;
  }
  return framing_name(Framing::A);
}

size_t header_size(Framing framing) { return framing == Framing::A ? 9 : 13; }

HeaderProblem parse_header(Framing framing, const uint8_t* bytes, uint32_t max_floats,
                           FrameHeader* out) {
  size_t at = 0;
  if (framing == Framing::B || framing == Framing::C) {
    const uint32_t magic = read_be32(bytes);
    if (magic != (framing == Framing::B ? kMagicRobo : kMagicDeadBeef)) {
      return HeaderProblem::BadMagic;
    }
    at = 4;
  }
  FrameHeader h;
  h.length = read_be32(bytes + at);
  h.type = bytes[at + 4];
  h.count = read_be32(bytes + at + 5);
  *out = h;
  const uint64_t max_length = 5 + 4 * uint64_t{max_floats};
  if (h.count > max_floats || h.length > max_length) return HeaderProblem::TooLarge;
  if (uint64_t{h.length} != 5 + 4 * uint64_t{h.count}) return HeaderProblem::LengthMismatch;
  return HeaderProblem::None;
}

std::vector<float> decode_floats(const uint8_t* bytes, size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* p = bytes + 4 * i;
    const uint32_t bits =
        uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
    std::memcpy(&values[i], &bits, sizeof bits);
  }
  return values;
}

std::vector<uint8_t> encode_frame_raw(Framing framing, uint8_t type,
                                      const std::vector<float>& values) {
  std::vector<uint8_t> out;
  out.reserve(header_size(framing) + 4 * values.size());
  if (framing == Framing::B) append_be32(out, kMagicRobo);
  if (framing == Framing::C) append_be32(out, kMagicDeadBeef);
  append_be32(out, static_cast<uint32_t>(5 + 4 * values.size()));
  out.push_back(type);
  append_be32(out, static_cast<uint32_t>(values.size()));
  for (float v : values) append_le_f32(out, v);
  return out;
}

void append_frame(std::string& out, Framing framing, MessageType type, const float* values,
                  size_t count) {
  auto be32 = [&out](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
  };
  if (framing == Framing::B) be32(kMagicRobo);
  if (framing == Framing::C) be32(kMagicDeadBeef);
  be32(static_cast<uint32_t>(5 + 4 * count));
  out.push_back(static_cast<char>(type));
  be32(static_cast<uint32_t>(count));
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    for (int s = 0; s < 32; s += 8) out.push_back(static_cast<char>((bits >> s) & 0xff));
  }
}

std::vector<uint8_t> encode_frame(Framing framing, MessageType type,
                                  const std::vector<float>& values) {
  return encode_frame_raw(framing, static_cast<uint8_t>(type), values);
}

}  // namespace fieldbrain::server
