// The binary wire formats of the robot port (docs/protocol.md, legacy §1): framing A (ef2bdb8,
// 9-byte header), B ("ROBO" magic, HEAD PiCar-X client) and C (0xDEADBEEF, HEAD demos), plus
// the JSON-lines mode, told apart by the first bytes of a connection (§1.5).
//
// Header integers are big-endian; payload floats are f32 little-endian (what every real
// client sends: Python's native order on x86-64 and ARM).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fieldbrain::server {

enum class Framing { A, B, C, JsonLines };

// Short name for logs and the monitor ("A", "B/ROBO", "C/DEADBEEF", "json").
const char* framing_name(Framing framing);

// Message types (§1.1); anything else is "unknown" and answered with an ERROR frame.
enum class MessageType : uint8_t {
  SensoryInput = 0,
  ActionOutput = 1,
  Handshake = 2,
  Error = 255,
};

// ERROR frame payload codes (§5.1); 1.0 is what ef2bdb8 sends for an unknown type, 2.0 and
// 3.1 are the legacy "protocol error" and "input too large" numbers, sent before a close.
constexpr float kErrorUnknownType = 1.0f;
constexpr float kErrorProtocol = 2.0f;
constexpr float kErrorTooLarge = 3.1f;

constexpr uint32_t kMagicRobo = 0x524F424Fu;      // "ROBO"
constexpr uint32_t kMagicDeadBeef = 0xDEADBEEFu;  // framing C

// Decides the framing from the first byte(s) of a connection. `first` holds what has been
// read so far (1..4 bytes): '{' alone means JSON lines; otherwise 4 bytes are needed.
// Returns nullopt when more bytes are needed to decide.
std::optional<Framing> detect_framing(const uint8_t* first, size_t n);

// What the first bytes of a connection open: one of the robot wire formats, or traffic for
// another protocol (a browser, curl, a TLS client) that gets a one-line refusal instead of
// being read as a framing-A length. Needs up to 4 bytes; nullopt while undecided. A legal
// framing-A length never starts with an HTTP method or a TLS record (both read as lengths
// far above any frame limit), so the two cannot be confused.
enum class Opening { A, B, C, JsonLines, Http, Tls };
std::optional<Opening> classify_opening(const uint8_t* first, size_t n);
const char* opening_name(Opening opening);

// Bytes of the fixed header, magic included (9 for A, 13 for B and C).
size_t header_size(Framing framing);

struct FrameHeader {
  uint32_t length = 0;  // bytes after the length field: 5 + 4*count when consistent
  uint8_t type = 0;
  uint32_t count = 0;  // number of floats in the body
};

// Why a header cannot be followed by a body read.
enum class HeaderProblem { None, BadMagic, LengthMismatch, TooLarge };
const char* header_problem_name(HeaderProblem problem);

// Parses a complete header of `framing` (header_size bytes) and checks it against the
// limit: count above max_floats (or a length above 5 + 4*max_floats) is TooLarge, a length
// other than 5 + 4*count is LengthMismatch. The body is never trusted before this passes.
HeaderProblem parse_header(Framing framing, const uint8_t* bytes, uint32_t max_floats,
                           FrameHeader* out);

// Decodes `count` little-endian f32 values.
std::vector<float> decode_floats(const uint8_t* bytes, size_t count);

// Encodes one complete frame (header + body) in `framing` (A, B or C).
std::vector<uint8_t> encode_frame(Framing framing, MessageType type,
                                  const std::vector<float>& values);

// Appends one complete frame to `out` (no allocation once `out` has the capacity).
void append_frame(std::string& out, Framing framing, MessageType type, const float* values,
                  size_t count);

// Convenience for tests and the soak client: a full frame with an explicit type byte.
std::vector<uint8_t> encode_frame_raw(Framing framing, uint8_t type,
                                      const std::vector<float>& values);

}  // namespace fieldbrain::server
