// The codec of the JSON-lines mode (json_lines.h): one object per '\n'-terminated line, at
// most CodecLimits::max_line bytes. Blank lines are rejected silently (counted as bad frames,
// so a connection that sends only blank lines is closed); malformed lines are rejected with
// an error object and counted the same way.
#pragma once

#include "app/server/protocol/robot_codec.h"

namespace fieldbrain::server {

class JsonCodec final : public RobotCodec {
 public:
  explicit JsonCodec(CodecLimits limits) : limits_(limits) {}

  WireMessage decode() override;

  void encode_accepted(const HandshakeAccepted& a, std::string& out) const override;
  void encode_motors(const std::vector<float>& motors, int64_t cycle,
                     std::string& out) const override;
  void encode_refused(int code, const std::string& why, std::string& out) const override;
  void encode_rejected(int code, const std::string& why, int motor_dim,
                       std::string& out) const override;
  void encode_unknown(const std::string& what, std::string& out) const override;
  const char* name() const override { return framing_name(Framing::JsonLines); }

 private:
  CodecLimits limits_;
  size_t scanned_ = 0;  // bytes of the current partial line already searched for '\n'
};

}  // namespace fieldbrain::server
