// One codec per wire format of the robot port (framings A/B/C, JSON lines, and the refusal
// of HTTP/TLS openings), in the manner of the Asio chat example's message class: the codec
// owns the bytes read from its connection, decodes them into messages the session
// understands (Handshake / Sensors / Unknown / Rejected / Fatal) and encodes the replies.
// RobotSession holds one codec and one state machine that never asks which format it speaks.
//
// Memory is bounded by construction: the session reads only when decode() says NeedMore,
// and a codec refuses (Fatal) a frame or line above its limit before buffering its body, so
// a connection never holds more than one maximal message plus one read chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "app/server/protocol/framing.h"
#include "app/server/protocol/handshake.h"
#include "app/server/protocol/wire_handshake.h"

namespace fieldbrain::server {

// One sensory message; `values` as sent (the session checks count and finiteness), the reward
// already split off (JSON "reward"; binary: the extra last element of an S+1 frame).
struct WireSensors {
  std::vector<float> values;
  float reward = 0.0f;
};

// A well-formed message of a type the robot port does not serve (binary type 1, 7, 255...;
// JSON "type":"dance"). `what` is already printable (escaped, truncated).
struct WireUnknown {
  std::string what;
};

// A message that is not usable but leaves the stream in sync: malformed JSON, a bad field,
// an unparsable handshake, a blank line. Counted as a bad frame; answered unless silent.
struct WireRejected {
  enum class Kind { Frame, Handshake, Silent };
  Kind kind = Kind::Frame;
  int code = 0;
  std::string why;  // printable
};

// The stream cannot go on (bad magic, frame too large, length mismatch, line too long, an
// HTTP or TLS opening): `reply` (possibly empty) is sent, then the connection closes.
struct WireFatal {
  int code = 0;
  std::string why;
  std::string reply;
};

struct NeedMore {};

using WireMessage =
    std::variant<NeedMore, WireHandshake, WireSensors, WireUnknown, WireRejected, WireFatal>;

// What an accepted handshake tells the robot; each codec picks what its format carries.
struct HandshakeAccepted {
  std::string key;  // identity after twin suffixing
  int sensory_dim = 0;
  int motor_dim = 0;
  int64_t cycle = 0;
  Capabilities caps;
  bool gpu = false;
  float server_caps = 8.0f;
  std::string token;  // identity token for the robot to keep ("" = none to hand out)
};

// Decode limits, from the server config.
struct CodecLimits {
  uint32_t max_frame_floats = 4096;
  int max_dim = 1024;
  size_t max_line = 1 << 20;
  int default_sensory = 16;  // JSON handshake without sizes
  int default_motor = 4;
};

class RobotCodec {
 public:
  virtual ~RobotCodec() = default;

  // Space for the next read (at least 1 byte, at most `max` bytes) and its commit.
  uint8_t* prepare(size_t max);
  void commit(size_t n);
  size_t buffered() const { return in_.size() - start_; }

  // The next message from the buffered bytes, or NeedMore.
  virtual WireMessage decode() = 0;
  // After the handshake: the negotiated sensory size (binary frames of S+1 carry a reward).
  virtual void set_sensory_dim(int sensory_dim) { (void)sensory_dim; }

  // Replies, appended to `out`.
  virtual void encode_accepted(const HandshakeAccepted& a, std::string& out) const = 0;
  virtual void encode_motors(const std::vector<float>& motors, int64_t cycle,
                             std::string& out) const = 0;
  // A refused handshake (bad capabilities, brain not made, identity refused).
  virtual void encode_refused(int code, const std::string& why, std::string& out) const = 0;
  // A rejected frame: binary answers `motor_dim` zero motors (0 before a handshake: ef2bdb8's
  // empty ACTION); JSON an error object.
  virtual void encode_rejected(int code, const std::string& why, int motor_dim,
                               std::string& out) const = 0;
  virtual void encode_unknown(const std::string& what, std::string& out) const = 0;
  // Framing B clients treat any reply as a handshake; they must be closed to retry cleanly.
  virtual bool closes_after_refusal() const { return false; }
  virtual const char* name() const = 0;

 protected:
  const uint8_t* data() const { return in_.data() + start_; }
  void consume(size_t n);

 private:
  std::vector<uint8_t> in_;
  size_t start_ = 0;        // first unread byte
  size_t prepared_at_ = 0;  // where the last prepare()d space begins
};

// The codec for an opening (classify_opening).
std::unique_ptr<RobotCodec> make_robot_codec(Opening opening, const CodecLimits& limits);

}  // namespace fieldbrain::server
