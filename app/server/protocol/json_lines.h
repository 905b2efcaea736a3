// The JSON-lines mode of the robot port (docs/protocol.md "JSON lines"): one object per line.
//
// Client -> server:
//   {"type":"handshake","robot_id":"r1","sensory_dim":S,"motor_dim":M,"token":"..."}
//       (robot_id: 1..128 characters, no control characters; token optional)
//   {"type":"sensors","values":[...S numbers...],"reward":r}     (reward optional, default 0)
// Server -> client:
//   {"type":"handshake","accepted":true,"robot_id":key,"sensory_dim":S,"motor_dim":M,"cycle":n}
//       (plus "token" when the server hands one out)
//   {"type":"motors","values":[...M numbers...],"cycle":n}
//   {"type":"error","code":c,"message":"..."}
// Unknown fields are ignored. Malformed lines, unknown types and blank lines count as bad
// frames (max_bad_frames); see robot_session.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace fieldbrain::server {

struct JsonHandshake {
  std::string robot_id;  // empty when the client sent none
  std::string token;     // identity token; empty when the client sent none
  int sensory_dim = 0;
  int motor_dim = 0;
};

struct JsonSensors {
  std::vector<float> values;  // as sent; finiteness and count are checked by the session
  float reward = 0.0f;
  bool values_ok = true;  // false when an element was not a number
};

// A line that is not a usable message: malformed JSON, a missing or ill-typed field, or an
// unknown "type". `code` is the legacy error number to report.
struct JsonBad {
  int code = 0;
  std::string message;        // quotes client text only through printable()
  bool unknown_type = false;  // a well-formed object with an unknown "type"
};

using JsonMessage = std::variant<JsonHandshake, JsonSensors, JsonBad>;

// Parses one line (without the newline). max_dim bounds sensory_dim/motor_dim; a handshake
// without them gets default_sensory/default_motor (the config's brain sizes).
JsonMessage parse_json_line(const std::string& line, int max_dim, int default_sensory,
                            int default_motor);

// Reply lines, each ending in '\n'.
// `token`, when not empty, is handed to the robot as "token".
std::string json_handshake_reply(const std::string& robot_key, int sensory_dim, int motor_dim,
                                 long long cycle, const std::string& token = "");
std::string json_motors_reply(const std::vector<float>& motors, long long cycle);
std::string json_error_reply(int code, const std::string& message);

}  // namespace fieldbrain::server
