// The binary handshake (docs/protocol.md, legacy §2): parsing the robot's capability vector, the
// reply each framing expects, the in-band error vector, and the legacy profile key.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "app/server/protocol/framing.h"

namespace fieldbrain::server {

// Legacy error codes (§5.2) the server uses; category = thousands digit - 1 as an index
// into CONNECTION, HANDSHAKE, SESSION, BRAIN, PERSISTENCE, RESOURCE, PROTOCOL.
constexpr int kCodeConnectionTimeout = 1002;
constexpr int kCodeInvalidCapabilities = 2001;
constexpr int kCodeHandshakeTimeout = 2003;
constexpr int kCodeDuplicateSession = 2004;
constexpr int kCodeIdentityRefused = 2005;  // ours: a protected robot_id without its token
constexpr int kCodeSessionNotFound = 3001;
constexpr int kCodeSessionLimit = 3003;
constexpr int kCodeBrainProcessing = 4002;
constexpr int kCodeDimensionMismatch = 4004;
// ours: the robot's brain stopped being finite in this cycle and was replaced by its last good
// save (or a fresh brain); docs/operating.md "A brain that stops being finite"
constexpr int kCodeBrainStateNotFinite = 4005;
constexpr int kCodePersistenceSave = 5001;
constexpr int kCodePersistenceLoad = 5002;
constexpr int kCodeInvalidMessage = 7001;
constexpr int kCodeMessageTooLarge = 7002;
constexpr int kCodeUnknownType = 7001;

int error_category(int code);           // 2001 -> 1 (HANDSHAKE)
const char* error_code_name(int code);  // 2001 -> "INVALID_CAPABILITIES"
const char* error_category_name(int code);

// What a robot declared (§2.1), after the legacy defaults for missing elements.
struct Capabilities {
  float version = 1.0f;
  int sensory_dim = 16;
  int motor_dim = 4;
  float hardware_type = 0.0f;  // 1 = PiCar-X, 2 = generic, else unknown
  int capability_mask = 0;
  int vision_width = 320;
  int vision_height = 240;
};

struct HandshakeLimits {
  int max_dim = 1024;  // S and M must lie in 1..max_dim
};

// Either the parsed capabilities or a sentence saying why they were refused (NaN or Inf in
// a size or the mask, S or M outside 1..max_dim). Sizes truncate like Python's int().
using HandshakeParse = std::variant<Capabilities, std::string>;
HandshakeParse parse_capabilities(const std::vector<float>& values, const HandshakeLimits& limits);

// "picarx", "generic" or "unknown" from the hardware-type element.
std::string hardware_name(float hardware_type);

// The legacy profile key "<hardware>_<S>s_<M>m" (§2.2) that names a binary robot.
std::string profile_key(const Capabilities& caps);

// The success reply: framing A `[1, M, S, M, 1]` (ef2bdb8's field_dims slot carries M);
// framing B/C `[1, S, M, gpu, caps]`.
std::vector<float> handshake_reply(Framing framing, const Capabilities& caps, bool gpu,
                                   float server_caps);

// `[-1, code, category, 0, 0]` (§5.2), sent as a HANDSHAKE frame.
std::vector<float> handshake_error_reply(int code);

}  // namespace fieldbrain::server
