// The codec of the binary framings A, B and C (ef2bdb8 and HEAD clients): a fixed header whose
// length and count are checked against the limit before any body byte is kept, then the
// little-endian float body. Replies go out in the framing the robot used.
#pragma once

#include "app/server/protocol/robot_codec.h"

namespace fieldbrain::server {

class BinaryCodec final : public RobotCodec {
 public:
  BinaryCodec(Framing framing, CodecLimits limits);

  WireMessage decode() override;
  void set_sensory_dim(int sensory_dim) override { sensory_dim_ = sensory_dim; }

  void encode_accepted(const HandshakeAccepted& a, std::string& out) const override;
  void encode_motors(const std::vector<float>& motors, int64_t cycle,
                     std::string& out) const override;
  void encode_refused(int code, const std::string& why, std::string& out) const override;
  void encode_rejected(int code, const std::string& why, int motor_dim,
                       std::string& out) const override;
  void encode_unknown(const std::string& what, std::string& out) const override;
  bool closes_after_refusal() const override { return framing_ == Framing::B; }
  const char* name() const override { return framing_name(framing_); }

 private:
  Framing framing_;
  CodecLimits limits_;
  int sensory_dim_ = 0;  // 0 until the handshake
  bool have_header_ = false;
  FrameHeader header_;
};

}  // namespace fieldbrain::server
