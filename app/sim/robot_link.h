// One simulated robot's connection to the brain server, speaking what the 2025-08-20 PiCar-X
// client speaks (framing B, handshake [1, 12, 6, 1, 3, 640, 480], strict lock-step: one
// SENSORY_INPUT, one ACTION_OUTPUT), or framing A, or the JSON-lines mode. The frame bytes
// come from the server's own protocol library (app/server/protocol/framing.h), so client and server
// cannot drift apart.
//
// Every wait has a deadline (TimedSocket): a silent server gives a LinkError, never a hang.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/server/protocol/framing.h"
#include "app/sim/timed_socket.h"

namespace fieldbrain::sim {

using server::Framing;

struct LinkOptions {
  std::string host = "127.0.0.1";
  int port = 9999;
  Framing framing = Framing::B;
  double timeout_s = 30.0;       // the HEAD client's 30 s per reply
  std::string robot_id = "sim";  // JSON mode only; binary robots are keyed by the server
  std::string token;             // JSON mode: the robot's token, "" before the server issued one
  int sensory_dim = 12;
  int motor_dim = 6;
};

// What the server answered to the handshake.
struct HandshakeReply {
  std::vector<float> values;  // binary framings: the raw reply vector
  std::string robot_key;      // JSON mode: the key the server gave this robot
  int sensory_dim = 0;        // as echoed (binary: index 1 for B, 2 for A)
  int motor_dim = 0;
  std::string token;          // JSON mode: a token the server issued now (store it), else ""
  long long cycle = -1;       // JSON mode: the brain's cycle (> 0: resumed); -1 when not sent
};

// A handshake the server answered with a refusal; `code` is its error code (2005: the
// robot_id is registered and this handshake's token is missing or wrong).
struct HandshakeRefused : LinkError {
  HandshakeRefused(int code, const std::string& what) : LinkError(what), code(code) {}
  int code;
};

// The handshake vector of the HEAD PiCar-X client (§2.1), for S sensors and M motors.
std::vector<float> picarx_handshake_vector(int sensory_dim, int motor_dim);

// Parses "host:port"; throws std::invalid_argument on anything else.
std::pair<std::string, int> parse_host_port(const std::string& text);

// Parses "a", "b" or "json" (also "c"); throws std::invalid_argument otherwise.
Framing parse_framing(const std::string& text);
// The inverse: the name parse_framing accepts ("a", "b", "c", "json").
std::string framing_label(Framing framing);

class RobotLink {
 public:
  explicit RobotLink(LinkOptions options);

  // Connects and handshakes. Throws HandshakeRefused on a refusal (a JSON error reply or a
  // failure vector [-1, code, ...]), LinkError on a timeout or a non-handshake reply.
  const HandshakeReply& connect();

  // One cycle: sends the sensors (plus the reward as element S+1, or the JSON "reward"
  // field, when given) and returns the motor values as received. The caller pads/truncates
  // to 6 as the client does. Throws LinkError on timeout, a closed connection, or a reply
  // that is not ACTION_OUTPUT / "motors".
  std::vector<float> exchange(const std::vector<float>& sensors, std::optional<float> reward);

  void close();
  const HandshakeReply& handshake() const { return handshake_; }

 private:
  void send_bytes(const std::vector<uint8_t>& bytes);
  std::vector<float> read_frame(server::MessageType expected);
  nlohmann::json read_json(const char* what);

  LinkOptions options_;
  TimedSocket socket_;
  HandshakeReply handshake_;
};

}  // namespace fieldbrain::sim
