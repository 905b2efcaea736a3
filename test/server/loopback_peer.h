// Raw loopback sockets for the hardening tests: a client bound to a chosen 127.0.0.x source
// address (per-address caps), sends that give up instead of blocking (floods against a
// server that stops reading), and the process's resident memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fieldbrain::server::testing {

class LoopbackPeer {
 public:
  // Connects from `source` (e.g. "127.0.0.2") to 127.0.0.1:port; sndbuf > 0 sets SO_SNDBUF.
  LoopbackPeer(const char* source, uint16_t port, int sndbuf = 0);
  ~LoopbackPeer();
  LoopbackPeer(const LoopbackPeer&) = delete;
  LoopbackPeer& operator=(const LoopbackPeer&) = delete;

  // Sends `text` repeatedly until `total` bytes are out, the peer closes, or a send makes no
  // progress for `stall_s`. Returns the bytes sent.
  size_t flood(const std::string& text, size_t total, double stall_s = 1.0);
  void send_all(const std::string& text);
  // True when the server closed the connection (EOF or reset) within timeout_s; bytes that
  // arrive first are read and counted in received().
  bool closed_within(double timeout_s);
  size_t received() const { return received_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  size_t received_ = 0;
};

// A loopback port the kernel just handed out and took back (for a child server process).
uint16_t free_loopback_port();

// Resident set size of this process in bytes (/proc/self/statm).
size_t resident_bytes();

}  // namespace fieldbrain::server::testing
