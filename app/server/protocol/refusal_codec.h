// The "codec" of traffic that is not a robot: an HTTP request or a TLS ClientHello on the
// robot port. Its only message is a Fatal carrying a clear refusal in the client's own terms
// (an HTTP 400 with a one-line body; a TLS handshake_failure alert), logged as such instead
// of as a frame of 541611092 floats.
#pragma once

#include "app/server/protocol/robot_codec.h"

namespace fieldbrain::server {

class RefusalCodec final : public RobotCodec {
 public:
  explicit RefusalCodec(Opening opening) : opening_(opening) {}

  WireMessage decode() override;

  // Never reached (decode() is fatal at once); present to complete the interface.
  void encode_accepted(const HandshakeAccepted&, std::string&) const override {}
  void encode_motors(const std::vector<float>&, int64_t, std::string&) const override {}
  void encode_refused(int, const std::string&, std::string&) const override {}
  void encode_rejected(int, const std::string&, int, std::string&) const override {}
  void encode_unknown(const std::string&, std::string&) const override {}
  const char* name() const override { return opening_name(opening_); }

 private:
  Opening opening_;
};

// The one line an HTTP client gets as the body of its 400 reply.
extern const char* const kHttpRefusalLine;

}  // namespace fieldbrain::server
