// A blocking robot-side client of the robot port (the [server] tests and fieldbrain-soak):
// POSIX sockets to 127.0.0.1, every read bounded by a receive timeout so a caller can never
// hang, exact reads over partial deliveries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/server/protocol/framing.h"

namespace fieldbrain::server {

struct Frame {
  uint32_t magic = 0;  // framing B/C only
  uint32_t length = 0;
  uint8_t type = 0;
  uint32_t count = 0;
  std::vector<float> values;
  std::vector<uint8_t> bytes;  // the whole frame as received
};

class RobotClient {
 public:
  // rcvbuf > 0 sets SO_RCVBUF before connecting (a reader with a tiny window); a non-empty
  // source_address ("127.0.0.2") binds the client's end there (robots on other addresses).
  explicit RobotClient(uint16_t port, double timeout_s = 10.0, int rcvbuf = 0,
                       const std::string& source_address = "");
  ~RobotClient();
  RobotClient(const RobotClient&) = delete;
  RobotClient& operator=(const RobotClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  void send_bytes(const std::vector<uint8_t>& bytes);
  void send_text(const std::string& text);
  // Exactly n bytes; nullopt on timeout or close.
  std::optional<std::vector<uint8_t>> read_exact(size_t n);
  // One frame of `framing` (header, then body); nullopt on timeout, close or a bad header.
  std::optional<Frame> read_frame(Framing framing);
  // One line without '\n'; nullopt on timeout or close.
  std::optional<std::string> read_line();
  // True when the server closed the connection (EOF or reset) within the timeout.
  bool wait_closed(double timeout_s = 5.0);
  void close();

  // Convenience: the handshake then `cycles` sensory frames of framing `f`.
  std::optional<Frame> handshake(Framing f, const std::vector<float>& caps);
  std::optional<Frame> exchange(Framing f, const std::vector<float>& sensors);

 private:
  int fd_ = -1;
  std::string pending_;  // bytes read past the last line
};

// Hex of a byte vector ("524f424f...") for readable failure messages.
std::string hex(const std::vector<uint8_t>& bytes);
std::vector<uint8_t> from_hex(const std::string& hex_text);

}  // namespace fieldbrain::server
